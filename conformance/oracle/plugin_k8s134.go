//go:build k8s1_34

package main

import "k8s.io/kubernetes/pkg/scheduler/framework"

type (
	FilterPlugin   = framework.FilterPlugin
	NominatingInfo = framework.NominatingInfo
)
