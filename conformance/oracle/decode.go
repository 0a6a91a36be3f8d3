package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	k8scorev1 "k8s.io/kubernetes/pkg/apis/core/v1"
	k8sstoragev1 "k8s.io/kubernetes/pkg/apis/storage/v1"
)

// defaulter applies the API server's defaulting functions (of the linked version) to
// decoded objects. Objects read back from a cluster are already defaulted (defaulting is
// idempotent); hand-written or generated objects get what the API server would store.
var defaulter = runtime.NewScheme()

func init() {
	utilruntime.Must(k8scorev1.AddToScheme(defaulter))
	utilruntime.Must(k8sstoragev1.AddToScheme(defaulter))
}

var namespacedKinds = map[string]bool{
	"Pod": true, "PersistentVolumeClaim": true, "Service": true, "ReplicaSet": true,
	"StatefulSet": true, "ReplicationController": true, "PodDisruptionBudget": true,
	"Deployment": true, "DaemonSet": true, "Job": true, "ResourceClaim": true,
	"ConfigMap": true, "Secret": true, "Endpoints": true, "EndpointSlice": true,
}

type caseIn struct {
	ID      string            `json:"id"`
	Objects []json.RawMessage `json:"objects"`
	Pod     struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"pod"`
}

type decoded struct {
	objects  []runtime.Object // what goes into the fake clientset
	pod      *v1.Pod          // the incoming pod
	nodes    []*v1.Node
	assigned []*v1.Pod // non-terminal pods with spec.nodeName
	pending  []*v1.Pod // non-terminal pods without spec.nodeName (incoming one included)
}

func decodeCase(in *caseIn) (*decoded, error) {
	d := &decoded{}
	ns := in.Pod.Namespace
	if ns == "" {
		ns = "default"
	}
	if in.Pod.Name == "" {
		return nil, fmt.Errorf("pod.name is empty")
	}
	dec := clientgoscheme.Codecs.UniversalDeserializer()
	seen := map[string]bool{}
	for i, raw := range in.Objects {
		obj, gvk, err := dec.Decode(raw, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("objects[%d]: cannot decode: %v", i, err)
		}
		acc, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("objects[%d]: %v", i, err)
		}
		if acc.GetName() == "" {
			return nil, fmt.Errorf("objects[%d] (%s): metadata.name is empty", i, gvk.Kind)
		}
		if namespacedKinds[gvk.Kind] && acc.GetNamespace() == "" {
			acc.SetNamespace("default")
		}
		key := gvk.Kind + "/" + acc.GetNamespace() + "/" + acc.GetName()
		if seen[key] {
			return nil, fmt.Errorf("objects[%d]: duplicate %s", i, key)
		}
		seen[key] = true
		if acc.GetResourceVersion() == "" {
			// Stored objects always have one; the volume binder's assume cache
			// parses it (and the fake tracker does not set one on initial objects).
			acc.SetResourceVersion(strconv.Itoa(i + 1))
		}
		if acc.GetUID() == "" {
			// The scheduler keys pods by UID; give every object a stable one.
			acc.SetUID(types.UID("oracle-" + strings.ToLower(gvk.Kind) + "-" + acc.GetNamespace() + "-" + acc.GetName()))
		}
		defaulter.Default(obj)
		switch o := obj.(type) {
		case *v1.Pod:
			terminal := o.Status.Phase == v1.PodSucceeded || o.Status.Phase == v1.PodFailed
			if o.Namespace == ns && o.Name == in.Pod.Name {
				if o.Spec.NodeName != "" {
					return nil, fmt.Errorf("incoming pod %s/%s is already bound to %q", ns, o.Name, o.Spec.NodeName)
				}
				if terminal {
					return nil, fmt.Errorf("incoming pod %s/%s is %s", ns, o.Name, o.Status.Phase)
				}
				if o.DeletionTimestamp != nil {
					return nil, fmt.Errorf("incoming pod %s/%s is being deleted; the scheduler skips it", ns, o.Name)
				}
				if len(o.Spec.SchedulingGates) > 0 {
					return nil, fmt.Errorf("incoming pod %s/%s has schedulingGates; the scheduler does not attempt it", ns, o.Name)
				}
				d.pod = o
			}
			if terminal {
				// The scheduler's pod informer lists with
				// status.phase!=Succeeded,status.phase!=Failed; the fake clientset
				// ignores field selectors, so leave these out here.
				continue
			}
			if o.Spec.NodeName != "" {
				d.assigned = append(d.assigned, o)
			} else {
				d.pending = append(d.pending, o)
			}
		case *v1.Node:
			d.nodes = append(d.nodes, o)
		}
		d.objects = append(d.objects, obj)
	}
	if d.pod == nil {
		return nil, fmt.Errorf("pod %s/%s not found among the objects", ns, in.Pod.Name)
	}
	return d, nil
}
