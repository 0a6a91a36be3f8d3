package main

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
	apiserveropts "k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kcmopts "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	schedopts "k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

type readyLine struct {
	Kubeconfig string `json:"kubeconfig"`
	Server     string `json:"server"`
	Version    string `json:"version"`
	Token      string `json:"tokenFile"`
	CA         string `json:"caFile"`
	DataDir    string `json:"dataDir"`
	Nodes      int    `json:"nodes"`
	Pid        int    `json:"pid"`
	// the embedded etcd's client URL: tests compact it (through its JSON gateway) to expire
	// continue tokens
	Etcd string `json:"etcd"`
}

type controlPlane struct {
	ready      readyLine
	died       chan error
	cancel     context.CancelFunc
	etcd       *embed.Etcd
	apiStopped chan struct{}
	apiStarted bool
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func freePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	return ports, nil
}

func start(parent context.Context, s settings) (*controlPlane, error) {
	deadline, cancelDeadline := context.WithTimeout(parent, s.readyTimeout)
	defer cancelDeadline()
	p, err := writePKI(s.dataDir)
	if err != nil {
		return nil, fmt.Errorf("writing certificates: %w", err)
	}
	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	etcdClient, etcdPeer, apiPort, kcmPort, schedPort := ports[0], ports[1], ports[2], ports[3], ports[4]

	ctx, cancel := context.WithCancel(context.Background())
	cp := &controlPlane{died: make(chan error, 4), cancel: cancel, apiStopped: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			cp.shutdown()
		}
	}()

	if cp.etcd, err = startEtcd(deadline, s.dataDir, etcdClient, etcdPeer); err != nil {
		return nil, err
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	if err := startAPIServer(ctx, cp, s, p, etcdClient, apiPort); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(s.dataDir, "admin.kubeconfig")
	if err := writeKubeconfig(kubeconfig, server, p); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	client := kubernetes.NewForConfigOrDie(cfg)
	if err := waitOK(deadline, cp, "kube-apiserver /readyz", func() error {
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(deadline)
		return err
	}); err != nil {
		return nil, err
	}

	common := []string{
		"--kubeconfig=" + kubeconfig, "--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig, "--leader-elect=false", "--bind-address=127.0.0.1",
		fmt.Sprintf("--kube-api-qps=%d", s.schedulerQPS), fmt.Sprintf("--kube-api-burst=%d", 2*s.schedulerQPS),
	}
	if err := startControllerManager(ctx, cp, s, p, kcmPort, common); err != nil {
		return nil, err
	}
	if err := startScheduler(ctx, cp, schedPort, common); err != nil {
		return nil, err
	}

	nodes, err := nodeSpecs(s)
	if err != nil {
		return nil, err
	}
	kubelet := newKubelet(client, s)
	if err := kubelet.createNodes(deadline, nodes); err != nil {
		return nil, err
	}
	go kubelet.run(ctx)

	for name, port := range map[string]int{"kube-controller-manager": kcmPort, "kube-scheduler": schedPort} {
		if err := waitOK(deadline, cp, name+" /healthz", httpsOK(fmt.Sprintf("https://127.0.0.1:%d/healthz", port))); err != nil {
			return nil, err
		}
	}
	if err := waitOK(deadline, cp, "nodes Ready", func() error { return kubelet.allReady(deadline, nodes) }); err != nil {
		return nil, err
	}
	if err := waitOK(deadline, cp, "namespace default", func() error {
		_, err := client.CoreV1().Namespaces().Get(deadline, "default", metav1GetOptions)
		return err
	}); err != nil {
		return nil, err
	}
	info, err := client.Discovery().ServerVersion()
	if err != nil {
		return nil, err
	}
	cp.ready = readyLine{Kubeconfig: kubeconfig, Server: server, Version: info.GitVersion,
		Token: filepath.Join(s.dataDir, "admin.token"), CA: p.caFile, DataDir: s.dataDir, Nodes: len(nodes), Pid: os.Getpid(),
		Etcd: fmt.Sprintf("http://127.0.0.1:%d", etcdClient)}
	ok = true
	return cp, nil
}

func startEtcd(ctx context.Context, dir string, clientPort, peerPort int) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "tspread"
	cfg.Dir = filepath.Join(dir, "etcd")
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", clientPort))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", peerPort))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(dir, "etcd.log")}
	// a test cluster's data is thrown away: fsync only costs time
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcd: %w", err)
	case <-ctx.Done():
		e.Close()
		return nil, fmt.Errorf("etcd was not ready in time")
	}
}

func parse(name string, sets map[string]*pflag.FlagSet, args []string) error {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	for _, f := range sets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s flags: %w", name, err)
	}
	return nil
}

func startAPIServer(ctx context.Context, cp *controlPlane, s settings, p *pki, etcdPort, port int) error {
	opts := apiserveropts.NewServerRunOptions()
	args := []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", etcdPort),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file=" + p.servingCert, "--tls-private-key-file=" + p.servingKey,
		"--client-ca-file=" + p.caFile, "--token-auth-file=" + p.tokenFile,
		// the front-proxy CA the scheduler's and controller manager's delegated authentication read
		"--requestheader-client-ca-file=" + p.caFile, "--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--authorization-mode=Node,RBAC",
		"--service-account-key-file=" + p.saPub, "--service-account-signing-key-file=" + p.saKey,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--cert-dir=" + filepath.Join(s.dataDir, "apiserver-certs"),
		// pods are created by tests in fresh namespaces: waiting for each default ServiceAccount
		// would only slow them down, and nothing here mounts tokens
		"--disable-admission-plugins=ServiceAccount",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		"--endpoint-reconciler-type=none",
	}
	args = append(args, s.apiserverArgs...)
	if err := parse("kube-apiserver", opts.Flags().FlagSets, args); err != nil {
		return err
	}
	// one registry of feature gates and versions, shared by the three components, set once as
	// each binary sets it after parsing its flags
	if err := compatibility.DefaultComponentGlobalsRegistry.Set(); err != nil {
		return err
	}
	completed, err := opts.Complete(ctx)
	if err != nil {
		return fmt.Errorf("kube-apiserver options: %w", err)
	}
	if errs := completed.Validate(); len(errs) > 0 {
		return fmt.Errorf("kube-apiserver options: %v", errs)
	}
	cp.apiStarted = true
	go func() {
		defer close(cp.apiStopped)
		err := apiserverapp.Run(ctx, completed)
		if ctx.Err() == nil {
			cp.died <- fmt.Errorf("kube-apiserver stopped: %v", err)
		}
	}()
	return nil
}

func startControllerManager(ctx context.Context, cp *controlPlane, s settings, p *pki, port int, common []string) error {
	opts, err := kcmopts.NewKubeControllerManagerOptions()
	if err != nil {
		return err
	}
	known, off, aliases := kcmapp.KnownControllers(), kcmapp.ControllersDisabledByDefault(), kcmapp.ControllerAliases()
	nfs := opts.Flags(known, off, aliases)
	opts.ParsedFlags = &nfs
	args := append([]string{
		"--controllers=" + s.controllerList, fmt.Sprintf("--secure-port=%d", port),
		"--use-service-account-credentials=false", "--root-ca-file=" + p.caFile,
		"--service-account-private-key-file=" + p.saKey,
		"--concurrent-deployment-syncs=10", "--concurrent-replicaset-syncs=10",
	}, common...)
	if err := parse("kube-controller-manager", nfs.FlagSets, args); err != nil {
		return err
	}
	c, err := opts.Config(ctx, known, off, aliases)
	if err != nil {
		return fmt.Errorf("kube-controller-manager config: %w", err)
	}
	go func() {
		err := kcmapp.Run(ctx, c.Complete())
		if ctx.Err() == nil {
			cp.died <- fmt.Errorf("kube-controller-manager stopped: %v", err)
		}
	}()
	return nil
}

func startScheduler(ctx context.Context, cp *controlPlane, port int, common []string) error {
	opts := schedopts.NewOptions()
	args := append([]string{fmt.Sprintf("--secure-port=%d", port)}, common...)
	if err := parse("kube-scheduler", opts.Flags.FlagSets, args); err != nil {
		return err
	}
	cc, sched, err := schedapp.Setup(ctx, opts)
	if err != nil {
		return fmt.Errorf("kube-scheduler setup: %w", err)
	}
	go func() {
		err := schedapp.Run(ctx, cc, sched)
		if ctx.Err() == nil {
			cp.died <- fmt.Errorf("kube-scheduler stopped: %v", err)
		}
	}()
	return nil
}

func writeKubeconfig(path, server string, p *pki) error {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: tspread-cluster
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: tspread-admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: tspread-cluster
  context:
    cluster: tspread-cluster
    user: tspread-admin
    namespace: default
current-context: tspread-cluster
`, server, b64(p.caPEM), b64(p.adminCertPEM), b64(p.adminKeyPEM))
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func httpsOK(u string) func() error {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // our own self-signed component on 127.0.0.1
	return func() error {
		resp, err := client.Get(u)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return nil
	}
}

// waitOK polls check until it succeeds, a component dies, or ctx ends (the error says which).
func waitOK(ctx context.Context, cp *controlPlane, what string, check func() error) error {
	var last error
	for {
		if last = check(); last == nil {
			return nil
		}
		select {
		case err := <-cp.died:
			return err
		case <-ctx.Done():
			return fmt.Errorf("%s not ready in time: %v", what, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (cp *controlPlane) shutdown() {
	if cp.cancel != nil {
		cp.cancel()
	}
	if cp.apiStarted {
		select {
		case <-cp.apiStopped:
		case <-time.After(15 * time.Second):
			klog.Warning("kube-apiserver did not stop within 15s")
		}
	}
	if cp.etcd != nil {
		cp.etcd.Close()
	}
	klog.Flush()
}
