package main

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// minor returns "1.33" … "1.37" for the linked k8s.io/kubernetes.
func minor() string {
	v := strings.TrimPrefix(k8sVersion, "v")
	parts := strings.SplitN(v, ".", 3)
	return parts[0] + "." + parts[1]
}

func runCases(t *testing.T) map[string]map[string]any {
	t.Helper()
	in, err := os.ReadFile("testdata/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// Invalid cases: each gets an error line and the run goes on.
	in = append(in, []byte(invalidCases)...)
	in = append(in, []byte(extraCase+"\n")...)
	silenceKlog()
	var out bytes.Buffer
	start := time.Now()
	if err := process(bytes.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	t.Logf("%d cases in %v", len(lines), time.Since(start))
	want := strings.Count(strings.TrimSpace(string(in)), "\n") + 1
	if len(lines) != want {
		t.Fatalf("got %d output lines for %d cases", len(lines), want)
	}
	res := map[string]map[string]any{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad output line %q: %v", l, err)
		}
		if m["version"] != k8sVersion {
			t.Errorf("version %v, want %v", m["version"], k8sVersion)
		}
		res[m["id"].(string)] = m
	}
	return res
}

func node(t *testing.T, r map[string]any, name string) map[string]any {
	t.Helper()
	for _, n := range r["nodes"].([]any) {
		if n := n.(map[string]any); n["name"] == name {
			return n
		}
	}
	t.Fatalf("node %s missing in %v", name, r["nodes"])
	return nil
}

func firstPlugin(t *testing.T, r map[string]any, name string) string {
	t.Helper()
	f := node(t, r, name)["first"]
	if f == nil {
		return ""
	}
	return f.(map[string]any)["plugin"].(string)
}

func filterOf(t *testing.T, r map[string]any, nodeName, plugin string) map[string]any {
	t.Helper()
	for _, f := range node(t, r, nodeName)["filters"].([]any) {
		if f := f.(map[string]any); f["plugin"] == plugin {
			return f
		}
	}
	t.Fatalf("filter %s missing on %s", plugin, nodeName)
	return nil
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %#v\n want %#v", what, got, want)
	}
}

func TestCases(t *testing.T) {
	res := runCases(t)
	for id, r := range res {
		if !strings.Contains(invalidCases, `"id":"`+id+`"`) && id != "" && r["error"] != "" {
			t.Fatalf("case %s: error %v", id, r["error"])
		}
	}

	// Issue 56: a cordoned node without the unschedulable taint still counts as a
	// domain under nodeTaintsPolicy Honor (the scheduler reads only spec.taints).
	c := res["cordon-no-taint"]
	spread := c["spread"].([]any)
	if len(spread) != 1 {
		t.Fatalf("cordon-no-taint: spread %v", spread)
	}
	s := spread[0].(map[string]any)
	eq(t, "counts", s["counts"], map[string]any{"a": 0.0, "b": 1.0})
	eq(t, "globalMin", s["globalMin"], 0.0)
	eq(t, "selector", s["selector"], "app=web")
	eq(t, "nodeTaintsPolicy", s["nodeTaintsPolicy"], "Honor")
	eq(t, "nodeAffinityPolicy", s["nodeAffinityPolicy"], "Honor")
	eq(t, "schedulable", c["schedulable"], false)
	eq(t, "a1 first", firstPlugin(t, c, "a1"), "NodeUnschedulable")
	eq(t, "a1 TaintToleration", filterOf(t, c, "a1", "TaintToleration")["code"], "Success")
	eq(t, "b1 first", firstPlugin(t, c, "b1"), "PodTopologySpread")
	eq(t, "b1 PodTopologySpread code", filterOf(t, c, "b1", "PodTopologySpread")["code"], "Unschedulable")
	eq(t, "cordon message", c["message"], "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, 1 node(s) were unschedulable. "+draText[minor()]+"preemption: 0/2 nodes are available: "+cordonPreemption[minor()])
	eq(t, "scores", c["scores"], []any{})
	eq(t, "top", c["top"], []any{})

	// Issue 56: a missing PVC is VolumeRestrictions' PreFilter rejection.
	m := res["missing-pvc"]
	pf := m["preFilter"].(map[string]any)
	eq(t, "preFilter plugin", pf["plugin"], "VolumeRestrictions")
	eq(t, "preFilter code", pf["code"], "UnschedulableAndUnresolvable")
	eq(t, "preFilter reasons", pf["reasons"], []any{`persistentvolumeclaim "data" not found`})
	eq(t, "n1 first plugin", firstPlugin(t, m, "n1"), "VolumeRestrictions")
	eq(t, "spread", m["spread"], nil)
	eq(t, "pvc message", m["message"], missingPVCMessage[minor()])

	// Schedulable: the terminating pod still holds n2's CPU; the Succeeded one does not count.
	sc := res["schedulable-scores"]
	eq(t, "schedulable", sc["schedulable"], true)
	eq(t, "message", sc["message"], "")
	eq(t, "top", sc["top"], []any{"n3"})
	if n := len(sc["scores"].([]any)); n != 3 {
		t.Errorf("scores for %d nodes, want 3", n)
	}
	eq(t, "spread (no hard constraint)", sc["spread"], []any{})

	ta := res["taints-affinity"]
	eq(t, "x1 first", firstPlugin(t, ta, "x1"), "NodeUnschedulable")
	eq(t, "x2 first", firstPlugin(t, ta, "x2"), "TaintToleration")
	eq(t, "x3 first", firstPlugin(t, ta, "x3"), "NodeAffinity")
	eq(t, "x4 first", firstPlugin(t, ta, "x4"), "NodeResourcesFit")
	eq(t, "x5 first", firstPlugin(t, ta, "x5"), "")
	eq(t, "top", ta["top"], []any{"x5"})
	eq(t, "schedulable", ta["schedulable"], true)
	eq(t, "x4 reasons", filterOf(t, ta, "x4", "NodeResourcesFit")["reasons"], []any{"Insufficient cpu"})
	// 1.34+: a request above the node's whole allocatable is UnschedulableAndUnresolvable.
	eq(t, "x4 code", filterOf(t, ta, "x4", "NodeResourcesFit")["code"], map[string]string{"1.33": "Unschedulable", "1.34": "UnschedulableAndUnresolvable", "1.35": "UnschedulableAndUnresolvable", "1.36": "UnschedulableAndUnresolvable", "1.37": "UnschedulableAndUnresolvable"}[minor()])
	// 1.34+ spells the taint reason without the taint.
	eq(t, "x2 taint reason", filterOf(t, ta, "x2", "TaintToleration")["reasons"], []any{map[string]string{"1.33": "node(s) had untolerated taint {dedicated: gpu}", "1.34": "node(s) had untolerated taint(s)", "1.35": "node(s) had untolerated taint(s)", "1.36": "node(s) had untolerated taint(s)", "1.37": "node(s) had untolerated taint(s)"}[minor()]})

	// A higher-priority pending pod nominated to m2 takes its CPU (framework's view,
	// with nominated pods); a matchFields affinity leaves m3 out of PreFilter's node set.
	nm := res["nominated-matchfields"]
	eq(t, "nodeNames", nm["preFilter"].(map[string]any)["nodeNames"], []any{"m1", "m2"})
	eq(t, "m2 first", node(t, nm, "m2")["first"], map[string]any{"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": []any{"Insufficient cpu"}})
	eq(t, "m2 NodeResourcesFit (with the nominated pod)", filterOf(t, nm, "m2", "NodeResourcesFit")["reasons"], []any{"Insufficient cpu"})
	eq(t, "m3 first", node(t, nm, "m3")["first"], map[string]any{"plugin": "", "code": "UnschedulableAndUnresolvable", "reasons": []any{"node(s) didn't satisfy plugin(s) [NodeAffinity]"}})
	eq(t, "nominated message", nm["message"], "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [NodeAffinity], 1 node(s) were unschedulable. "+draText[minor()]+"preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.")

	// Objects without resourceVersion (hand-written) get one: VolumeBinding's Reserve
	// parses the PVC's. The ReplicaSet owner brings the system default (soft) spread
	// constraints into the scores.
	w := res["wffc-pvc-owner"]
	eq(t, "wffc schedulable", w["schedulable"], true)
	eq(t, "wffc top", w["top"], []any{"b1"})
	for _, sc := range w["scores"].([]any) {
		sc := sc.(map[string]any)
		want := map[string]float64{"a1": 120, "a2": 120, "b1": 200}[sc["name"].(string)]
		eq(t, "PodTopologySpread score on "+sc["name"].(string), sc["plugins"].(map[string]any)["PodTopologySpread"], want)
	}

	for id, want := range map[string]string{
		"unknown-pod": "not found among the objects",
		"bad-object":  "objects[0]: cannot decode",
		"":            "invalid case",
		"bound-pod":   "already bound",
	} {
		r := res[id]
		if e, _ := r["error"].(string); !strings.Contains(e, want) {
			t.Errorf("%s: error %q, want it to contain %q", id, e, want)
		}
		if _, ok := r["nodes"]; ok {
			t.Errorf("%s: error result has nodes", id)
		}
	}

	for _, id := range []string{"cordon-no-taint", "missing-pvc"} {
		t.Logf("%s %s message: %s", k8sVersion, id, res[id]["message"])
	}
}

// The PostFilter (DefaultPreemption) part of the cordon case's message, per minor:
// b1 failed with Unschedulable (a preemption candidate, but no lower-priority pod),
// a1 with UnschedulableAndUnresolvable.
var cordonPreemption = map[string]string{
	"1.33": "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
	"1.34": "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
	"1.35": "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
	"1.36": "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
	"1.37": "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
}

// The missing-PVC message per minor. In 1.37 the first PostFilter plugin,
// DynamicResources, reads its PreFilter state before anything else; PreFilter
// stopped at VolumeRestrictions (UnschedulableAndUnresolvable), so the read fails
// with the CycleState's ErrNotFound ("not found"), the PostFilter phase ends with
// that Error and DefaultPreemption never runs: the condition says "... not found. not found".
// What DynamicResources' PostFilter says before DefaultPreemption's part: on 1.34-1.36, for a
// pod without claims, "no new claims to deallocate" (1.33 has no such plugin by default, and
// 1.37's status carries no message).
var draText = map[string]string{"1.33": "", "1.34": "no new claims to deallocate, ", "1.35": "no new claims to deallocate, ", "1.36": "no new claims to deallocate, ", "1.37": ""}

var missingPVCMessage = map[string]string{
	"1.34": `0/2 nodes are available: persistentvolumeclaim "data" not found. not found`,
	"1.35": `0/2 nodes are available: persistentvolumeclaim "data" not found. not found`,
	"1.36": `0/2 nodes are available: persistentvolumeclaim "data" not found. not found`,
	"1.33": `0/2 nodes are available: persistentvolumeclaim "data" not found. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.`,
	"1.37": `0/2 nodes are available: persistentvolumeclaim "data" not found. not found`,
}

const invalidCases = `{"id":"unknown-pod","objects":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}],"pod":{"namespace":"default","name":"nope"}}
{"id":"bad-object","objects":[{"apiVersion":"v1","kind":"NoSuchKind","metadata":{"name":"x"}}],"pod":{"name":"p"}}
{"id": "broken json
{"id":"bound-pod","objects":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"x"}]}}],"pod":{"name":"p"}}
`

// A WaitForFirstConsumer PVC, a ReplicaSet owner, no resourceVersions.
const extraCase = `{"id":"wffc-pvc-owner","objects":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a1","labels":{"kubernetes.io/hostname":"a1","topology.kubernetes.io/zone":"a"}},"spec":{},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}},{"apiVersion":"v1","kind":"Node","metadata":{"name":"a2","labels":{"kubernetes.io/hostname":"a2","topology.kubernetes.io/zone":"a"}},"spec":{},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}},{"apiVersion":"v1","kind":"Node","metadata":{"name":"b1","labels":{"kubernetes.io/hostname":"b1","topology.kubernetes.io/zone":"b"}},"spec":{},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}},{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-1","namespace":"default","uid":"rs-uid"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}},{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w1","namespace":"default","labels":{"app":"web"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":"rs-uid","controller":true}]},"spec":{"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"100m"}}}],"nodeName":"a1"},"status":{"phase":"Running"}},{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w2","namespace":"default","labels":{"app":"web"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":"rs-uid","controller":true}]},"spec":{"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"100m"}}}],"nodeName":"a2"},"status":{"phase":"Running"}},{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data","namespace":"default"},"spec":{"accessModes":["ReadWriteOnce"],"storageClassName":"wffc","resources":{"requests":{"storage":"1Gi"}}}},{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"wffc"},"provisioner":"example.com/x","volumeBindingMode":"WaitForFirstConsumer"},{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","labels":{"app":"web"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":"rs-uid","controller":true}]},"spec":{"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"100m"}}}],"volumes":[{"name":"d","persistentVolumeClaim":{"claimName":"data"}}]},"status":{"phase":"Pending"}}],"pod":{"namespace":"default","name":"p"}}`
