package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/podtopologyspread"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// ---- output ----

type statusOut struct {
	Plugin  string   `json:"plugin"`
	Code    string   `json:"code"`
	Reasons []string `json:"reasons"`
}

type preFilterOut struct {
	Code      string   `json:"code"`
	Plugin    string   `json:"plugin"`
	Reasons   []string `json:"reasons"`
	NodeNames []string `json:"nodeNames"`
}

type nodeOut struct {
	Name    string      `json:"name"`
	Filters []statusOut `json:"filters"`
	First   *statusOut  `json:"first"`
}

type spreadOut struct {
	TopologyKey        string         `json:"topologyKey"`
	MaxSkew            int32          `json:"maxSkew"`
	MinDomains         int32          `json:"minDomains"`
	NodeAffinityPolicy string         `json:"nodeAffinityPolicy"`
	NodeTaintsPolicy   string         `json:"nodeTaintsPolicy"`
	Selector           string         `json:"selector"`
	Counts             map[string]int `json:"counts"`
	GlobalMin          int            `json:"globalMin"`
}

type scoreOut struct {
	Name    string           `json:"name"`
	Total   int64            `json:"total"`
	Plugins map[string]int64 `json:"plugins"`
}

type result struct {
	ID          string        `json:"id"`
	Version     string        `json:"version"`
	Error       string        `json:"error"`
	PreFilter   *preFilterOut `json:"preFilter"`
	Nodes       []nodeOut     `json:"nodes"`
	Schedulable bool          `json:"schedulable"`
	Message     string        `json:"message"`
	Spread      []spreadOut   `json:"spread"`
	Scores      []scoreOut    `json:"scores"`
	Top         []string      `json:"top"`
}

type errorResult struct {
	ID      string `json:"id"`
	Version string `json:"version"`
	Error   string `json:"error"`
}

// ---- helpers ----

var k8sVersion = func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "k8s.io/kubernetes" {
				if m.Replace != nil {
					return m.Replace.Version
				}
				return m.Version
			}
		}
	}
	return fallbackVersion
}()

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func codeString(st *Status) string {
	if st == nil {
		return codeSuccess.String()
	}
	return st.Code().String()
}

func toStatusOut(plugin string, st *Status) statusOut {
	if st == nil {
		return statusOut{Plugin: plugin, Code: codeSuccess.String(), Reasons: []string{}}
	}
	if plugin == "" {
		plugin = st.Plugin()
	}
	return statusOut{Plugin: plugin, Code: st.Code().String(), Reasons: nonNil(st.Reasons())}
}

func sameStatus(a, b *statusOut) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return reflect.DeepEqual(*a, *b)
}

// ---- the case ----

const waitLimit = 30 * time.Second

func runCase(in *caseIn) (res *result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	d, err := decodeCase(in)
	if err != nil {
		return nil, err
	}
	pod := d.pod

	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
	defer cancel()

	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	hundred := int32(100)
	cfg.PercentageOfNodesToScore = &hundred

	cs := fake.NewSimpleClientset(d.objects...)
	informerFactory := newInformerFactory(cs)
	sched, err := scheduler.New(ctx, cs, informerFactory, nil, recorderFactory(),
		scheduler.WithComponentConfigVersion(cfg.TypeMeta.APIVersion),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithExtenders(cfg.Extenders...),
		scheduler.WithParallelism(cfg.Parallelism),
	)
	if err != nil {
		return nil, fmt.Errorf("scheduler.New: %w", err)
	}
	defer sched.SchedulingQueue.Close()

	fw, ok := sched.Profiles[pod.Spec.SchedulerName]
	if !ok {
		return nil, fmt.Errorf("incoming pod's schedulerName %q has no profile", pod.Spec.SchedulerName)
	}
	var profileArgs map[string]runtime.Object
	for _, p := range cfg.Profiles {
		if p.SchedulerName == pod.Spec.SchedulerName {
			profileArgs = map[string]runtime.Object{}
			for _, pc := range p.PluginConfig {
				profileArgs[pc.Name] = pc.Args
			}
		}
	}

	// Every Filter plugin of the profile, to run each on its own. The framework's own
	// instances are reachable through EnqueueExtensions() (every in-tree Filter plugin
	// registers queueing hints); a plugin not found there is instantiated through the
	// in-tree registry with the framework as handle (before the informers start, so
	// any informer it asks for is started too).
	ownInstances := map[string]FilterPlugin{}
	for _, ext := range fw.EnqueueExtensions() {
		if fp, ok := ext.(FilterPlugin); ok {
			ownInstances[fp.Name()] = fp
		}
	}
	var registry frameworkruntime.Registry
	filterNames := []string{}
	filterPlugins := map[string]FilterPlugin{}
	for _, p := range fw.ListPlugins().Filter.Enabled {
		filterNames = append(filterNames, p.Name)
		if fp, ok := ownInstances[p.Name]; ok {
			filterPlugins[p.Name] = fp
			continue
		}
		if registry == nil {
			registry = frameworkplugins.NewInTreeRegistry()
		}
		factory, ok := registry[p.Name]
		if !ok {
			return nil, fmt.Errorf("filter plugin %q not in the in-tree registry", p.Name)
		}
		pl, err := factory(ctx, profileArgs[p.Name], fw)
		if err != nil {
			return nil, fmt.Errorf("instantiating %s: %w", p.Name, err)
		}
		fp, ok := pl.(FilterPlugin)
		if !ok {
			return nil, fmt.Errorf("plugin %s is not a FilterPlugin", p.Name)
		}
		filterPlugins[p.Name] = fp
	}

	var mu sync.Mutex
	var failStatus *Status
	failed, cycleOver := false, false
	hookScheduler(sched, pod.UID, func(st *Status) {
		mu.Lock()
		defer mu.Unlock()
		if !cycleOver && !failed {
			failed, failStatus = true, st
		}
	})

	// The framework's snapshot (the scheduler's own; it updates it at the start of
	// every scheduling cycle).
	snap, ok := fw.SnapshotSharedLister().(*internalcache.Snapshot)
	if !ok {
		return nil, fmt.Errorf("unexpected snapshot type %T", fw.SnapshotSharedLister())
	}

	informerFactory.Start(ctx.Done())
	if err := waitReady(ctx, sched, snap, d); err != nil {
		return nil, err
	}
	// Every other informer (PVCs, PVs, classes, CSINodes, services, owners, PDBs, …)
	// has synced too.
	if err := waitInformersSynced(ctx, informerFactory); err != nil {
		return nil, err
	}
	// A pod that a PreEnqueue plugin rejects never leaves the unschedulable pool: the
	// scheduler makes no attempt (and writes no condition).
	if pq, ok := sched.SchedulingQueue.(*internalqueue.PriorityQueue); ok {
		active := false
		for _, p := range pq.PodsInActiveQ() {
			active = active || p.UID == pod.UID
		}
		if !active {
			for _, pl := range fw.PreEnqueuePlugins() {
				if st := pl.PreEnqueue(ctx, pod); !st.IsSuccess() {
					return nil, fmt.Errorf("the scheduler does not attempt this pod: PreEnqueue plugin %s: %s", pl.Name(), st.Message())
				}
			}
			return nil, errors.New("the incoming pod is not in the scheduler's active queue")
		}
	}

	nodeInfos, err := snap.NodeInfos().List()
	if err != nil {
		return nil, err
	}
	sort.Slice(nodeInfos, func(i, j int) bool { return nodeInfos[i].Node().Name < nodeInfos[j].Node().Name })

	res = &result{ID: in.ID, Version: k8sVersion, Nodes: []nodeOut{}, Scores: []scoreOut{}, Top: []string{}}

	// PreFilter, exactly as the framework runs it.
	state := newCycleState()
	preRes, preSt, unschedPlugins := fw.RunPreFilterPlugins(ctx, state, pod)
	pf := &preFilterOut{Code: codeString(preSt), Reasons: []string{}}
	if preSt != nil {
		pf.Plugin = preSt.Plugin()
		pf.Reasons = nonNil(preSt.Reasons())
	}
	if preRes != nil && !preRes.AllNodes() {
		pf.NodeNames = sets.List(preRes.NodeNames)
	}
	res.PreFilter = pf
	preOK := preSt.IsSuccess()
	skipped := skippedFilters(state)

	// Filters, per node.
	var feasible []NodeInfo
	for _, ni := range nodeInfos {
		name := ni.Node().Name
		no := nodeOut{Name: name, Filters: []statusOut{}}
		if !preOK {
			// The scheduler runs no Filter; its diagnosis gives every node the
			// PreFilter status (and Error aborts the cycle).
			s := toStatusOut("", preSt)
			no.First = &s
			res.Nodes = append(res.Nodes, no)
			continue
		}
		// Like RunFilterPluginsWithNominatedPods, per plugin: first with the nominated
		// pods of equal or higher priority added (if any), then, if that passed, without.
		added, nomState, nomNode, nomErr := withNominatedPods(ctx, fw, pod, state, ni)
		var ownFirst *statusOut
		for _, fname := range filterNames {
			if skipped[fname] {
				no.Filters = append(no.Filters, statusOut{Plugin: fname, Code: "Skip", Reasons: []string{}})
				continue
			}
			var st *Status
			switch {
			case nomErr != nil:
				st = asStatus(nomErr)
			case added:
				if st = filterPlugins[fname].Filter(ctx, nomState, pod, nomNode); st.IsSuccess() {
					st = filterPlugins[fname].Filter(ctx, state, pod, ni)
				}
			default:
				st = filterPlugins[fname].Filter(ctx, state, pod, ni)
			}
			so := toStatusOut(fname, st)
			no.Filters = append(no.Filters, so)
			if ownFirst == nil && !st.IsSuccess() {
				c := so
				if !st.IsRejected() {
					// what the framework does with a non-rejecting failure
					c = toStatusOut(fname, asStatus(fmt.Errorf("running %q filter plugin: %w", fname, st.AsError())))
				}
				ownFirst = &c
			}
		}
		if preRes != nil && !preRes.AllNodes() && !preRes.NodeNames.Has(name) {
			// Left out by the PreFilterResult: the status findNodesThatFitPod records.
			st := statusUU(fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unschedPlugins)))
			s := toStatusOut("", st)
			no.First = &s
		} else {
			st := fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if !st.IsSuccess() {
				s := toStatusOut("", st)
				no.First = &s
			} else {
				feasible = append(feasible, ni)
			}
			if !sameStatus(no.First, ownFirst) {
				fmt.Fprintf(os.Stderr, "oracle: case %s node %s: framework's first failing filter %+v differs from the per-plugin run %+v\n", in.ID, name, no.First, ownFirst)
			}
		}
		res.Nodes = append(res.Nodes, no)
	}

	// PodTopologySpread's PreFilter state.
	// null when PreFilter did not succeed, [] without a hard constraint (Skip).
	if preOK {
		res.Spread, err = readSpread(state, skipped[podtopologyspread.Name])
		if err != nil {
			return nil, err
		}
	}

	// PreScore + Score over the feasible nodes.
	if len(feasible) > 0 {
		if st := fw.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
			return nil, fmt.Errorf("RunPreScorePlugins: %v", st.AsError())
		}
		scores, st := fw.RunScorePlugins(ctx, state, pod, feasible)
		if !st.IsSuccess() {
			return nil, fmt.Errorf("RunScorePlugins: %v", st.AsError())
		}
		best := int64(0)
		for i, ns := range scores {
			so := scoreOut{Name: ns.Name, Total: ns.TotalScore, Plugins: map[string]int64{}}
			for _, ps := range ns.Scores {
				so.Plugins[ps.Name] = ps.Score
			}
			res.Scores = append(res.Scores, so)
			if i == 0 || ns.TotalScore > best {
				best = ns.TotalScore
			}
		}
		sort.Slice(res.Scores, func(i, j int) bool { return res.Scores[i].Name < res.Scores[j].Name })
		for _, so := range res.Scores {
			if so.Total == best {
				res.Top = append(res.Top, so.Name)
			}
		}
	}

	// One real scheduling cycle: ScheduleOne with the failure handler recording the
	// status whose message the scheduler writes into the PodScheduled condition.
	done := make(chan struct{})
	var cyclePanic any
	go func() {
		defer close(done)
		defer func() { cyclePanic = recover() }()
		sched.ScheduleOne(ctx)
		// The scheduling cycle has run (ScheduleOne returns once it has, and calls
		// the failure handler synchronously when it fails); later calls come from
		// the asynchronous binding cycle and are ignored.
		mu.Lock()
		cycleOver = true
		mu.Unlock()
	}()
	select {
	case <-done:
	case <-time.After(waitLimit):
		sched.SchedulingQueue.Close()
		return nil, errors.New("timed out waiting for the scheduling cycle")
	}
	if cyclePanic != nil {
		return nil, fmt.Errorf("panic in the scheduling cycle: %v", cyclePanic)
	}
	mu.Lock()
	res.Schedulable = !failed
	if failed && failStatus != nil {
		res.Message = failStatus.Message()
	}
	mu.Unlock()
	return res, nil
}

// waitReady waits until the scheduler's cache holds every node (with its Node object)
// and every assigned pod, and its queue every pending pod (so nominations are known);
// it leaves the snapshot updated.
func waitReady(ctx context.Context, sched *scheduler.Scheduler, snap *internalcache.Snapshot, d *decoded) error {
	logger := klog.FromContext(ctx)
	want := sets.New[string]()
	for _, p := range d.pending {
		if p.Spec.SchedulerName == d.pod.Spec.SchedulerName {
			want.Insert(string(p.UID))
		}
	}
	deadline := time.Now().Add(waitLimit)
	delay := 20 * time.Microsecond
	var nodes, pods, pending int
	for {
		// The snapshot is first taken once the cache holds every node, as a scheduler's first
		// cycle comes after its informers synced: a node cloned into it earlier would keep
		// the image counts of that moment (ImageLocality's NumNodes), since a later snapshot
		// clones only the nodes that changed.
		nodes = nodesIn(sched.Cache)
		pods, _ = sched.Cache.PodCount()
		pending = 0
		if nodes == len(d.nodes) && pods == len(d.assigned) {
			if err := sched.Cache.UpdateSnapshot(logger, snap); err != nil {
				return fmt.Errorf("UpdateSnapshot: %w", err)
			}
			queued, _ := sched.SchedulingQueue.PendingPods()
			for _, p := range queued {
				if want.Has(string(p.UID)) {
					pending++
				}
			}
			if pending == want.Len() {
				// The cache held every pod when counted, but the snapshot was taken before
				// that: a pod added in between would be missing from it. Taken again now,
				// it holds everything the count saw.
				if err := sched.Cache.UpdateSnapshot(logger, snap); err != nil {
					return fmt.Errorf("UpdateSnapshot: %w", err)
				}
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("scheduler not ready after %v: %d/%d nodes, %d/%d assigned pods, %d/%d pending pods queued",
				waitLimit, nodes, len(d.nodes), pods, len(d.assigned), pending, want.Len())
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

// nodesIn counts the nodes the cache holds a Node object for (an entry made for a pod that
// came before its node has none yet).
func nodesIn(c internalcache.Cache) int {
	n := 0
	for _, info := range c.Dump().Nodes {
		if info.Node() != nil {
			n++
		}
	}
	return n
}

// statusUU builds an UnschedulableAndUnresolvable status.
func statusUU(msg string) *Status {
	return newStatus(codeUnschedulableAndUnresolvable, msg)
}

// setAside handles a pending pod other than the incoming one that the queue hands out
// before it: it goes back to the queue as after a failed attempt (backoff or
// unschedulable pool, never ahead of the incoming pod), so that its nomination keeps
// its full PodInfo (the nominator only sees requests of pods it finds in a queue; an
// in-flight or dropped pod would count as an empty pod). If that fails it is dropped.
func setAside(logger klog.Logger, s *scheduler.Scheduler, pod *v1.Pod, requeue func() error) {
	if err := requeue(); err != nil {
		fmt.Fprintf(os.Stderr, "oracle: could not requeue pending pod %s/%s: %v\n", pod.Namespace, pod.Name, err)
		s.SchedulingQueue.Done(pod.UID)
	}
}
