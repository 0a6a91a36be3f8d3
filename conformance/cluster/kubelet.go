package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

var metav1GetOptions = metav1.GetOptions{}

// unmanaged on a Node leaves it alone: the stand-in neither makes it Ready nor runs its pods
// (a test can then keep a node NotReady, or leave pods Pending-but-bound on purpose).
const unmanagedAnnotation = "tspread.dev/kubelet-stand-in"

const (
	unschedulableTaint = "node.kubernetes.io/unschedulable"
	notReadyTaint      = "node.kubernetes.io/not-ready"
	unreachableTaint   = "node.kubernetes.io/unreachable"
)

// kubelet is the stand-in for every node's kubelet: it keeps Node objects Ready, marks pods
// bound to them Running and Ready with a pod IP, and removes terminating pods once their grace
// period (capped by --max-grace) is over, as a kubelet does after the containers stopped.
type kubelet struct {
	client      kubernetes.Interface
	maxGrace    time.Duration
	cordonTaint bool

	nodes listersv1.NodeLister
	pods  listersv1.PodLister
	queue workqueue.TypedRateLimitingInterface[string]

	mu       sync.Mutex
	nextIP   int
	removing map[string]bool // pod UIDs with a removal timer set
}

func newKubelet(client kubernetes.Interface, s settings) *kubelet {
	return &kubelet{client: client, maxGrace: s.maxGrace, cordonTaint: s.cordonTaint,
		queue:    workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		removing: map[string]bool{}}
}

// nodeSpecs: --nodes generated nodes, round-robin over --zones, plus those of --nodes-file.
func nodeSpecs(s settings) ([]*corev1.Node, error) {
	var nodes []*corev1.Node
	zones := strings.Split(s.zones, ",")
	alloc := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: s.nodeCPU, corev1.ResourceMemory: s.nodeMemory,
		corev1.ResourcePods: s.nodePods, corev1.ResourceEphemeralStorage: "100Gi"} {
		v, err := resource.ParseQuantity(q)
		if err != nil {
			return nil, fmt.Errorf("node %s %q: %w", name, q, err)
		}
		alloc[name] = v
	}
	for i := 0; i < s.nodes; i++ {
		zone := zones[i%len(zones)]
		name := fmt.Sprintf("node-%02d", i+1)
		nodes = append(nodes, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone,
				"topology.kubernetes.io/region": "region-1", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			}},
			Status: corev1.NodeStatus{Capacity: alloc.DeepCopy(), Allocatable: alloc.DeepCopy()},
		})
	}
	if s.nodesFile != "" {
		data, err := os.ReadFile(s.nodesFile)
		if err != nil {
			return nil, err
		}
		var list corev1.NodeList
		trimmed := strings.TrimSpace(string(data))
		switch {
		case strings.HasPrefix(trimmed, "["):
			err = json.Unmarshal(data, &list.Items)
		case strings.Contains(trimmed, `"items"`):
			err = json.Unmarshal(data, &list)
		default:
			var one corev1.Node
			err = json.Unmarshal(data, &one)
			list.Items = []corev1.Node{one}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.nodesFile, err)
		}
		for i := range list.Items {
			n := list.Items[i].DeepCopy()
			n.ResourceVersion, n.UID = "", ""
			nodes = append(nodes, n)
		}
	}
	return nodes, nil
}

func (k *kubelet) createNodes(ctx context.Context, nodes []*corev1.Node) error {
	for _, want := range nodes {
		created, err := k.client.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			created, err = k.client.CoreV1().Nodes().Get(ctx, want.Name, metav1.GetOptions{})
		}
		if err != nil {
			return fmt.Errorf("creating node %s: %w", want.Name, err)
		}
		if len(created.Status.Allocatable) == 0 && len(want.Status.Allocatable) > 0 {
			created.Status.Capacity, created.Status.Allocatable = want.Status.Capacity, want.Status.Allocatable
		}
		if err := k.makeReady(ctx, created); err != nil {
			return err
		}
	}
	return nil
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (k *kubelet) allReady(ctx context.Context, nodes []*corev1.Node) error {
	for _, want := range nodes {
		n, err := k.client.CoreV1().Nodes().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !ready(n) {
			return fmt.Errorf("node %s is not Ready", n.Name)
		}
		for _, t := range n.Spec.Taints {
			if t.Key == notReadyTaint {
				return fmt.Errorf("node %s still has the %s taint", n.Name, notReadyTaint)
			}
		}
	}
	return nil
}

// makeReady writes the status a healthy kubelet reports: Ready, no pressure, an address.
func (k *kubelet) makeReady(ctx context.Context, n *corev1.Node) error {
	if n.Annotations[unmanagedAnnotation] == "off" || ready(n) {
		return nil
	}
	n = n.DeepCopy()
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	n.Status.Conditions = []corev1.NodeCondition{
		cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
		cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
		cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
		cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
	}
	if len(n.Status.Addresses) == 0 {
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
			{Type: corev1.NodeHostName, Address: n.Name}}
	}
	if n.Status.Capacity == nil {
		n.Status.Capacity = n.Status.Allocatable.DeepCopy()
	}
	n.Status.NodeInfo.KubeletVersion = "v0.0.0-tspread-stand-in"
	n.Status.NodeInfo.OperatingSystem, n.Status.NodeInfo.Architecture = "linux", "amd64"
	_, err := k.client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("node %s status: %w", n.Name, err)
	}
	return nil
}

// syncTaints does the node lifecycle controller's part with taints (it does not run here):
// a Ready node loses the not-ready taint the API server's TaintNodesByCondition admission put
// on it at creation, and, with --cordon-taint, spec.unschedulable brings the
// node.kubernetes.io/unschedulable:NoSchedule taint and an uncordon takes it away.
func (k *kubelet) syncTaints(ctx context.Context, n *corev1.Node) error {
	if n.Annotations[unmanagedAnnotation] == "off" || !ready(n) {
		return nil
	}
	var keep []corev1.Taint
	cordoned := false
	for _, t := range n.Spec.Taints {
		switch {
		case t.Effect == corev1.TaintEffectNoSchedule && (t.Key == notReadyTaint || t.Key == unreachableTaint):
			continue
		case k.cordonTaint && t.Key == unschedulableTaint && t.Effect == corev1.TaintEffectNoSchedule:
			if !n.Spec.Unschedulable {
				continue
			}
			cordoned = true
		}
		keep = append(keep, t)
	}
	if k.cordonTaint && n.Spec.Unschedulable && !cordoned {
		now := metav1.Now()
		keep = append(keep, corev1.Taint{Key: unschedulableTaint, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &now})
	}
	if sameTaints(keep, n.Spec.Taints) {
		return nil
	}
	n = n.DeepCopy()
	n.Spec.Taints = keep
	_, err := k.client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	return err
}

func sameTaints(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Effect != b[i].Effect || a[i].Value != b[i].Value {
			return false
		}
	}
	return true
}

func (k *kubelet) run(ctx context.Context) {
	factory := informers.NewSharedInformerFactory(k.client, 0)
	nodeInf, podInf := factory.Core().V1().Nodes(), factory.Core().V1().Pods()
	k.nodes, k.pods = nodeInf.Lister(), podInf.Lister()
	onNode := func(obj interface{}) {
		if n, ok := obj.(*corev1.Node); ok {
			k.queue.Add("node/" + n.Name)
		}
	}
	onPod := func(obj interface{}) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			k.queue.Add("pod/" + p.Namespace + "/" + p.Name)
		}
	}
	_, _ = nodeInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onNode,
		UpdateFunc: func(_, n interface{}) { onNode(n) }})
	_, _ = podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onPod,
		UpdateFunc: func(_, p interface{}) { onPod(p) }})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	defer k.queue.ShutDown()
	for i := 0; i < 8; i++ {
		go wait.UntilWithContext(ctx, k.worker, time.Second)
	}
	<-ctx.Done()
}

func (k *kubelet) worker(ctx context.Context) {
	for {
		key, quit := k.queue.Get()
		if quit {
			return
		}
		err := k.sync(ctx, key)
		if err != nil && ctx.Err() == nil {
			klog.V(2).InfoS("kubelet stand-in: retrying", "key", key, "err", err)
			k.queue.AddRateLimited(key)
		} else {
			k.queue.Forget(key)
		}
		k.queue.Done(key)
	}
}

func (k *kubelet) sync(ctx context.Context, key string) error {
	if name, ok := strings.CutPrefix(key, "node/"); ok {
		n, err := k.nodes.Get(name)
		if apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		if err := k.makeReady(ctx, n); err != nil {
			return err
		}
		return k.syncTaints(ctx, n)
	}
	parts := strings.SplitN(strings.TrimPrefix(key, "pod/"), "/", 2)
	pod, err := k.pods.Pods(parts[0]).Get(parts[1])
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if node, err := k.nodes.Get(pod.Spec.NodeName); err != nil || node.Annotations[unmanagedAnnotation] == "off" {
		return nil // a pod bound to a node no kubelet runs stays as it is
	}
	if pod.DeletionTimestamp != nil {
		k.scheduleRemoval(ctx, pod)
		return nil
	}
	if pod.Status.Phase == corev1.PodPending || pod.Status.Phase == "" {
		return k.markRunning(ctx, pod)
	}
	return nil
}

// scheduleRemoval deletes a terminating pod (grace 0) when its grace period, capped at
// maxGrace, has passed since the deletion was asked for.
func (k *kubelet) scheduleRemoval(ctx context.Context, pod *corev1.Pod) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.removing[string(pod.UID)] {
		return
	}
	k.removing[string(pod.UID)] = true
	grace := 30 * time.Second
	if pod.DeletionGracePeriodSeconds != nil {
		grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	}
	asked := pod.DeletionTimestamp.Add(-grace)
	if grace > k.maxGrace {
		grace = k.maxGrace
	}
	uid, ns, name := pod.UID, pod.Namespace, pod.Name
	time.AfterFunc(time.Until(asked.Add(grace)), func() {
		zero := int64(0)
		err := k.client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero,
			Preconditions: &metav1.Preconditions{UID: &uid}})
		k.mu.Lock()
		delete(k.removing, string(uid))
		k.mu.Unlock()
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
			klog.InfoS("kubelet stand-in: removing a terminating pod failed; retrying", "pod", ns+"/"+name, "err", err)
			k.queue.AddAfter("pod/"+ns+"/"+name, time.Second)
		}
	})
}

func (k *kubelet) podIP() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.nextIP++
	return fmt.Sprintf("10.244.%d.%d", (k.nextIP/250)%250, k.nextIP%250+2)
}

func (k *kubelet) markRunning(ctx context.Context, pod *corev1.Pod) error {
	pod = pod.DeepCopy()
	now := metav1.Now()
	ip := k.podIP()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.HostIP, pod.Status.PodIP = "127.0.0.1", ip
	pod.Status.HostIPs, pod.Status.PodIPs = []corev1.HostIP{{IP: "127.0.0.1"}}, []corev1.PodIP{{IP: ip}}
	pod.Status.StartTime = &now
	conds := []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady}
	for _, t := range conds {
		setCondition(&pod.Status, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	pod.Status.ContainerStatuses = nil
	started := true
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "stand-in://" + c.Image, ContainerID: "stand-in://" + string(pod.UID) + "/" + c.Name,
			Ready: true, Started: &started, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	_, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func setCondition(status *corev1.PodStatus, c corev1.PodCondition) {
	for i := range status.Conditions {
		if status.Conditions[i].Type == c.Type {
			status.Conditions[i] = c
			return
		}
	}
	status.Conditions = append(status.Conditions, c)
}
