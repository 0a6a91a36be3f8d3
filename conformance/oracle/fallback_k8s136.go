//go:build k8s1_36

package main

// the linked Kubernetes, when the binary's build information does not name it
const fallbackVersion = "v1.36.3"
