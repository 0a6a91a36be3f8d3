//go:build !k8s1_33

package main

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// What 1.34 and later share (the framework interfaces live in k8s.io/kube-scheduler/framework);
// compat_k8s136.go and compat_k8s137.go hold what differs between them.

// Version-specific names (1.34+: framework interfaces live in k8s.io/kube-scheduler/framework).
type (
	Status     = fwk.Status
	Code       = fwk.Code
	CycleState = fwk.CycleState
	NodeInfo   = fwk.NodeInfo
	StateKey   = fwk.StateKey
)

const (
	codeSuccess                      = fwk.Success
	codeUnschedulableAndUnresolvable = fwk.UnschedulableAndUnresolvable
)

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

// keepIncoming says whether the queue's next pod goes to ScheduleOne: the incoming pod does;
// another pending pod is put back (setAside) once, and dropped if handed out again.
func keepIncoming(logger klog.Logger, s *scheduler.Scheduler, uid types.UID, seen map[types.UID]bool,
	qp *framework.QueuedPodInfo, requeue func() error) bool {
	if qp == nil || qp.Pod == nil || qp.Pod.UID == uid {
		return true
	}
	if seen[qp.Pod.UID] {
		// handed out again (from backoff): drop it rather than loop
		s.SchedulingQueue.Done(qp.Pod.UID)
		return false
	}
	seen[qp.Pod.UID] = true
	setAside(logger, s, qp.Pod, requeue)
	return false
}

// recordFailures hands the status given to the failure handler (the one whose Message()
// handleSchedulingFailure writes into the PodScheduled condition) to onFail.
func recordFailures(s *scheduler.Scheduler, onFail func(*Status)) {
	s.FailureHandler = func(_ context.Context, _ framework.Framework, _ *framework.QueuedPodInfo, st *fwk.Status, _ *NominatingInfo, _ time.Time) {
		onFail(st)
	}
}
