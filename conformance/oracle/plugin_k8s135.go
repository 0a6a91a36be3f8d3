//go:build !k8s1_33 && !k8s1_34

package main

import fwk "k8s.io/kube-scheduler/framework"

// 1.35 moved the plugin interfaces to k8s.io/kube-scheduler/framework.
type (
	FilterPlugin   = fwk.FilterPlugin
	NominatingInfo = fwk.NominatingInfo
)
