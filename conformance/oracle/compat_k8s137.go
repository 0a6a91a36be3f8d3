//go:build !k8s1_33 && !k8s1_34 && !k8s1_35 && !k8s1_36

package main

import (
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

const fallbackVersion = "v1.37.2"

func newInformerFactory(cs clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(cs, 0, nil)
}

// hookScheduler makes ScheduleOne pick the pod with uid (see keepIncoming) and records the
// status handed to the failure handler. 1.37's queue hands out entities.
func hookScheduler(s *scheduler.Scheduler, uid types.UID, onFail func(*Status)) {
	next := s.NextEntity
	seen := map[types.UID]bool{}
	s.NextEntity = func(logger klog.Logger) (framework.QueuedEntityInfo, error) {
		for {
			e, err := next(logger)
			if err != nil || e == nil {
				return e, err
			}
			qp, ok := e.(*framework.QueuedPodInfo)
			if !ok {
				continue
			}
			requeue := func() error {
				return s.SchedulingQueue.AddUnschedulablePodIfNotPresent(logger, qp, s.SchedulingQueue.SchedulingCycle())
			}
			if keepIncoming(logger, s, uid, seen, qp, requeue) {
				return e, nil
			}
		}
	}
	recordFailures(s, onFail)
}
