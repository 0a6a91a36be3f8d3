//go:build k8s1_33

package main

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// Version-specific names (1.33: framework interfaces live in pkg/scheduler/framework).
type (
	Status       = framework.Status
	Code         = framework.Code
	CycleState   = *framework.CycleState
	NodeInfo     = *framework.NodeInfo
	StateKey     = framework.StateKey
	FilterPlugin = framework.FilterPlugin
)

const (
	codeSuccess                      = framework.Success
	codeUnschedulableAndUnresolvable = framework.UnschedulableAndUnresolvable
)

const fallbackVersion = "v1.33.13"

func asStatus(err error) *Status { return framework.AsStatus(err) }

func newStatus(c Code, reasons ...string) *Status { return framework.NewStatus(c, reasons...) }

func newCycleState() CycleState {
	s := framework.NewCycleState()
	s.SetRecordPluginMetrics(false)
	s.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	return s
}

func skippedFilters(s CycleState) map[string]bool {
	out := map[string]bool{}
	for n := range s.SkipFilterPlugins {
		out[n] = true
	}
	return out
}

func newInformerFactory(cs clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(cs, 0)
}

func recorderFactory() profile.RecorderFactory {
	return func(string) events.EventRecorder { return &events.FakeRecorder{} }
}

// hookScheduler: see compat_k8s137.go.
func hookScheduler(s *scheduler.Scheduler, uid types.UID, onFail func(*Status)) {
	next := s.NextPod
	seen := map[types.UID]bool{}
	s.NextPod = func(logger klog.Logger) (*framework.QueuedPodInfo, error) {
		for {
			qp, err := next(logger)
			if err != nil || qp == nil || qp.Pod == nil {
				return qp, err
			}
			if qp.Pod.UID == uid {
				return qp, nil
			}
			if seen[qp.Pod.UID] {
				// handed out again (from backoff): drop it rather than loop
				s.SchedulingQueue.Done(qp.Pod.UID)
				continue
			}
			seen[qp.Pod.UID] = true
			setAside(logger, s, qp.Pod, func() error {
				return s.SchedulingQueue.AddUnschedulableIfNotPresent(logger, qp, s.SchedulingQueue.SchedulingCycle())
			})
		}
	}
	s.FailureHandler = func(_ context.Context, _ framework.Framework, _ *framework.QueuedPodInfo, st *framework.Status, _ *framework.NominatingInfo, _ time.Time) {
		onFail(st)
	}
}

// withNominatedPods: see compat_k8s137.go.
func withNominatedPods(ctx context.Context, fw framework.Framework, pod *v1.Pod, state CycleState, ni NodeInfo) (bool, CycleState, NodeInfo, error) {
	nominated := fw.NominatedPodsForNode(ni.Node().Name)
	if len(nominated) == 0 {
		return false, state, ni, nil
	}
	niOut, stateOut, added := ni.Snapshot(), state.Clone(), false
	for _, pi := range nominated {
		if corev1helpers.PodPriority(pi.Pod) >= corev1helpers.PodPriority(pod) && pi.Pod.UID != pod.UID {
			niOut.AddPodInfo(pi)
			if st := fw.RunPreFilterExtensionAddPod(ctx, stateOut, pod, pi, niOut); !st.IsSuccess() {
				return false, state, ni, st.AsError()
			}
			added = true
		}
	}
	return added, stateOut, niOut, nil
}

// waitInformersSynced: client-go 0.33's WaitForCacheSync polls every 100 ms; ask it
// with an already closed stop channel (one immediate check) and retry quickly.
func waitInformersSynced(ctx context.Context, f informers.SharedInformerFactory) error {
	closed := make(chan struct{})
	close(closed)
	delay := 20 * time.Microsecond
	deadline := time.Now().Add(waitLimit)
	for {
		pending := []string{}
		for typ, ok := range f.WaitForCacheSync(closed) {
			if !ok {
				pending = append(pending, fmt.Sprint(typ))
			}
		}
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("informers did not sync: %v", pending)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		if delay < time.Millisecond {
			delay *= 2
		}
	}
}
