//go:build k8s1_34 || k8s1_35

package main

import (
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

func recorderFactory() profile.RecorderFactory {
	return func(string) events.EventRecorder { return &events.FakeRecorder{} }
}
