//go:build !k8s1_33 && !k8s1_36

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
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// Version-specific names (1.34+: framework interfaces live in k8s.io/kube-scheduler/framework).
type (
	Status       = fwk.Status
	Code         = fwk.Code
	CycleState   = fwk.CycleState
	NodeInfo     = fwk.NodeInfo
	StateKey     = fwk.StateKey
	FilterPlugin = fwk.FilterPlugin
)

const (
	codeSuccess                      = fwk.Success
	codeUnschedulableAndUnresolvable = fwk.UnschedulableAndUnresolvable
)

const fallbackVersion = "v1.37.2"

func asStatus(err error) *Status { return fwk.AsStatus(err) }

func newStatus(c Code, reasons ...string) *Status { return fwk.NewStatus(c, reasons...) }

func newCycleState() CycleState {
	s := framework.NewCycleState()
	s.SetRecordPluginMetrics(false)
	s.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	return s
}

func skippedFilters(s CycleState) map[string]bool {
	out := map[string]bool{}
	for n := range s.GetSkipFilterPlugins() {
		out[n] = true
	}
	return out
}

func newInformerFactory(cs clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(cs, 0, nil)
}

func recorderFactory() profile.RecorderFactory {
	return func(string) events.EventRecorderLogger { return &events.FakeRecorder{} }
}

// hookScheduler makes ScheduleOne pick the pod with uid (see setAside for the other
// pending pods) and records the status handed to the failure handler (the status
// whose Message() handleSchedulingFailure writes into the PodScheduled condition).
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
			if qp == nil || qp.Pod == nil {
				return e, nil
			}
			if qp.Pod.UID == uid {
				return e, nil
			}
			if seen[qp.Pod.UID] {
				// handed out again (from backoff): drop it rather than loop
				s.SchedulingQueue.Done(qp.Pod.UID)
				continue
			}
			seen[qp.Pod.UID] = true
			setAside(logger, s, qp.Pod, func() error {
				return s.SchedulingQueue.AddUnschedulablePodIfNotPresent(logger, qp, s.SchedulingQueue.SchedulingCycle())
			})
		}
	}
	s.FailureHandler = func(_ context.Context, _ framework.Framework, _ *framework.QueuedPodInfo, st *fwk.Status, _ *fwk.NominatingInfo, _ time.Time) {
		onFail(st)
	}
}

// withNominatedPods returns the state and node with the pods nominated to the node
// of equal or higher priority added, as the framework's first Filter pass sees them.
func withNominatedPods(ctx context.Context, fw framework.Framework, pod *v1.Pod, state CycleState, ni NodeInfo) (bool, CycleState, NodeInfo, error) {
	nominated := fw.NominatedPodsForNode(ni.Node().Name)
	if len(nominated) == 0 {
		return false, state, ni, nil
	}
	niOut, stateOut, added := ni.Snapshot(), state.Clone(), false
	for _, pi := range nominated {
		if corev1helpers.PodPriority(pi.GetPod()) >= corev1helpers.PodPriority(pod) && pi.GetPod().UID != pod.UID {
			niOut.AddPodInfo(pi)
			if st := fw.RunPreFilterExtensionAddPod(ctx, stateOut, pod, pi, niOut); !st.IsSuccess() {
				return false, state, ni, st.AsError()
			}
			added = true
		}
	}
	return added, stateOut, niOut, nil
}

// waitInformersSynced: client-go 0.37 waits for informers without polling.
func waitInformersSynced(ctx context.Context, f informers.SharedInformerFactory) error {
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	return nil
}
