package main

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/podtopologyspread"
)

// PodTopologySpread writes its PreFilter state under "PreFilter" + plugin name.
const spreadStateKey = "PreFilter" + podtopologyspread.Name

// readSpread reads PodTopologySpread's (unexported) PreFilter state with reflect:
// hard constraints, per-domain counts and the global minimum as upstream's
// minMatchNum computes it. skipped: the plugin's PreFilter returned Skip (no hard
// constraint) -> []. No state (PreFilter failed or did not reach the plugin) -> nil.
func readSpread(state CycleState, skipped bool) ([]spreadOut, error) {
	if skipped {
		return []spreadOut{}, nil
	}
	data, err := state.Read(StateKey(spreadStateKey))
	if err != nil || data == nil {
		return nil, nil
	}
	v := reflect.ValueOf(data)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil, nil
		}
		v = v.Elem()
	}
	field := func(v reflect.Value, names ...string) (reflect.Value, error) {
		for _, n := range names {
			if f := v.FieldByName(n); f.IsValid() {
				return f, nil
			}
		}
		return reflect.Value{}, fmt.Errorf("PodTopologySpread state %s: no field %v", v.Type(), names)
	}
	cons, err := field(v, "Constraints")
	if err != nil {
		return nil, err
	}
	paths, err := field(v, "CriticalPaths", "TpKeyToCriticalPaths")
	if err != nil {
		return nil, err
	}
	counts, err := field(v, "TpValueToMatchNum", "TpPairToMatchNum")
	if err != nil {
		return nil, err
	}
	out := []spreadOut{}
	for i := 0; i < cons.Len(); i++ {
		c := cons.Index(i)
		get := func(name string) (reflect.Value, error) { return field(c, name) }
		var so spreadOut
		f, err := get("TopologyKey")
		if err != nil {
			return nil, err
		}
		so.TopologyKey = f.String()
		if f, err = get("MaxSkew"); err != nil {
			return nil, err
		}
		so.MaxSkew = int32(f.Int())
		if f, err = get("MinDomains"); err != nil {
			return nil, err
		}
		so.MinDomains = int32(f.Int())
		if f, err = get("NodeAffinityPolicy"); err != nil {
			return nil, err
		}
		so.NodeAffinityPolicy = f.String()
		if f, err = get("NodeTaintsPolicy"); err != nil {
			return nil, err
		}
		so.NodeTaintsPolicy = f.String()
		if f, err = get("Selector"); err != nil {
			return nil, err
		}
		if sel, ok := f.Interface().(labels.Selector); ok && sel != nil {
			so.Selector = sel.String()
		}
		so.Counts = map[string]int{}
		switch counts.Kind() {
		case reflect.Slice: // []map[string]int, indexed by constraint
			m := counts.Index(i)
			it := m.MapRange()
			for it.Next() {
				so.Counts[it.Key().String()] = int(it.Value().Int())
			}
		case reflect.Map: // map[topologyPair]int (older releases)
			it := counts.MapRange()
			for it.Next() {
				k := it.Key()
				if k.Field(0).String() == so.TopologyKey {
					so.Counts[k.Field(1).String()] = int(it.Value().Int())
				}
			}
		}
		// minMatchNum: CriticalPaths[i][0].MatchNum, or 0 with fewer domains than minDomains.
		var p reflect.Value
		if paths.Kind() == reflect.Slice {
			p = paths.Index(i)
		} else {
			p = paths.MapIndex(reflect.ValueOf(so.TopologyKey))
		}
		for p.Kind() == reflect.Pointer || p.Kind() == reflect.Interface {
			p = p.Elem()
		}
		mm, err := field(p.Index(0), "MatchNum")
		if err != nil {
			return nil, err
		}
		so.GlobalMin = int(mm.Int())
		if len(so.Counts) < int(so.MinDomains) {
			so.GlobalMin = 0
		}
		out = append(out, so)
	}
	return out, nil
}
