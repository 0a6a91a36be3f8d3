// Command tspread-cluster runs a small but real Kubernetes control plane on 127.0.0.1, in one
// process, for kubectl-tspread's end-to-end tests: an embedded etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler (each from its upstream package, started through
// its Run function with the flags its binary would get), and a kubelet stand-in that keeps
// Node objects Ready and plays the kubelet's part for the pods bound to them.
//
// When everything answers it writes <data-dir>/admin.kubeconfig and prints one JSON line on
// stdout: {"kubeconfig": …, "server": …, "version": …, …}. SIGTERM or SIGINT stops it.
// Component logs go to stderr (or --log-file).
//
// Test-only: users of kubectl-tspread never need Go.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/klog/v2"
)

type settings struct {
	dataDir        string
	nodes          int
	zones          string
	nodeCPU        string
	nodeMemory     string
	nodePods       string
	nodesFile      string
	maxGrace       time.Duration
	cordonTaint    bool
	readyTimeout   time.Duration
	logFile        string
	verbosity      int
	schedulerQPS   int
	controllerList string
	exitWithParent bool
	apiserverArgs  repeated
}

// repeated is a flag that may be given more than once; each value is kept, in order.
type repeated []string

func (r *repeated) String() string     { return fmt.Sprint(*r) }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func parseFlags() settings {
	var s settings
	flag.StringVar(&s.dataDir, "data-dir", "", "directory for etcd's data, certificates, keys and admin.kubeconfig (required)")
	flag.IntVar(&s.nodes, "nodes", 0, "how many Node objects to create, spread round-robin over --zones")
	flag.StringVar(&s.zones, "zones", "zone-a,zone-b,zone-c", "comma-separated topology.kubernetes.io/zone values of the created nodes")
	flag.StringVar(&s.nodeCPU, "node-cpu", "4", "allocatable cpu of each created node")
	flag.StringVar(&s.nodeMemory, "node-memory", "16Gi", "allocatable memory of each created node")
	flag.StringVar(&s.nodePods, "node-pods", "110", "allocatable pods of each created node")
	flag.StringVar(&s.nodesFile, "nodes-file", "", "JSON file with Node objects to create (a List, an array, or one object); added to --nodes")
	flag.DurationVar(&s.maxGrace, "max-grace", 2*time.Second, "a terminating pod is removed after its grace period, but never later than this")
	flag.BoolVar(&s.cordonTaint, "cordon-taint", true, "add node.kubernetes.io/unschedulable:NoSchedule to cordoned nodes and remove it on uncordon, as the node lifecycle controller does (it does not run here)")
	flag.DurationVar(&s.readyTimeout, "ready-timeout", 5*time.Minute, "give up when the control plane is not ready within this time")
	flag.StringVar(&s.logFile, "log-file", "", "write component logs here instead of stderr")
	flag.IntVar(&s.verbosity, "v", 0, "log verbosity of the components")
	flag.IntVar(&s.schedulerQPS, "kube-api-qps", 200, "client QPS of the scheduler and the controller manager")
	flag.StringVar(&s.controllerList, "controllers",
		"deployment,replicaset,statefulset,daemonset,disruption,garbagecollector,namespace,serviceaccount,serviceaccount-token,podgc",
		"kube-controller-manager --controllers (the node lifecycle controller stays off)")
	flag.BoolVar(&s.exitWithParent, "exit-with-parent", false, "shut down when the process that started this one exits (a test run killed without stopping it)")
	flag.Var(&s.apiserverArgs, "apiserver-arg", "one more kube-apiserver flag, e.g. --apiserver-arg=--watch-cache-sizes=pods#0 (repeatable; applied after the defaults)")
	flag.Parse()
	if s.dataDir == "" {
		fmt.Fprintln(os.Stderr, "error: --data-dir is required")
		os.Exit(2)
	}
	return s
}

func setupLogging(s settings) {
	fs := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", fmt.Sprint(s.verbosity))
	if s.logFile != "" {
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("alsologtostderr", "false")
		_ = fs.Set("log_file", s.logFile)
	}
}

func main() {
	s := parseFlags()
	setupLogging(s)
	if err := os.MkdirAll(s.dataDir, 0o700); err != nil {
		fail(err)
	}
	dir, err := filepath.Abs(s.dataDir)
	if err != nil {
		fail(err)
	}
	s.dataDir = dir

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if s.exitWithParent {
		ctx = watchParent(ctx)
	}
	cp, err := start(ctx, s)
	if err != nil {
		fail(err)
	}
	line, _ := json.Marshal(cp.ready)
	fmt.Println(string(line))
	_ = os.Stdout.Sync()

	select {
	case <-ctx.Done():
	case err := <-cp.died:
		klog.ErrorS(err, "a component stopped; shutting down")
		cp.shutdown()
		os.Exit(1)
	}
	cp.shutdown()
}

// watchParent ends the returned context when this process is re-parented (its parent died).
func watchParent(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	ppid := os.Getppid()
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if os.Getppid() != ppid {
					klog.Info("the parent process exited; shutting down")
					cancel()
					return
				}
			}
		}
	}()
	return ctx
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "error: %v\n", err)
	klog.Flush()
	os.Exit(1)
}
