//go:build k8s1_34 || k8s1_35 || k8s1_36

package main

import (
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func newInformerFactory(cs clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(cs, 0)
}

// hookScheduler makes ScheduleOne pick the pod with uid (see keepIncoming) and records the
// status handed to the failure handler. 1.34–1.36's queue hands out pods.
func hookScheduler(s *scheduler.Scheduler, uid types.UID, onFail func(*Status)) {
	next := s.NextPod
	seen := map[types.UID]bool{}
	s.NextPod = func(logger klog.Logger) (*framework.QueuedPodInfo, error) {
		for {
			qp, err := next(logger)
			if err != nil {
				return qp, err
			}
			requeue := func() error {
				return s.SchedulingQueue.AddUnschedulableIfNotPresent(logger, qp, s.SchedulingQueue.SchedulingCycle())
			}
			if keepIncoming(logger, s, uid, seen, qp, requeue) {
				return qp, nil
			}
		}
	}
	recordFailures(s, onFail)
}
