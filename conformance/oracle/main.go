// Command oracle is the kubectl-tspread test oracle: it evaluates pods with the
// upstream kube-scheduler code of one Kubernetes minor (the one this binary is
// linked against) and reports PreFilter, every Filter per node, the FitError
// message, PodTopologySpread's counts and the scores. Test-only; see README.md.
//
// Input: JSON Lines on stdin, one case per line. Output: one JSON line per case.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/klog/v2"
)

func silenceKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", "0")
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
}

// process reads cases from r and writes one line per case to w.
func process(r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 1<<20)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for {
		line, readErr := br.ReadBytes('\n')
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			var out any
			var in caseIn
			if err := json.Unmarshal(line, &in); err != nil {
				var probe struct {
					ID string `json:"id"`
				}
				_ = json.Unmarshal(line, &probe)
				out = errorResult{ID: probe.ID, Version: k8sVersion, Error: "invalid case: " + err.Error()}
			} else if res, err := runCase(&in); err != nil {
				out = errorResult{ID: in.ID, Version: k8sVersion, Error: err.Error()}
			} else {
				out = res
			}
			if err := enc.Encode(out); err != nil { // one Write per line: unbuffered, so flushed
				return err
			}
		}
		if readErr == io.EOF {
			return nil
		}
		if readErr != nil {
			return readErr
		}
	}
}

func main() {
	version := flag.Bool("version", false, "print the Kubernetes version this oracle is built from")
	flag.Parse()
	if *version {
		fmt.Println(k8sVersion)
		return
	}
	silenceKlog()
	if err := process(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "oracle:", err)
		os.Exit(1)
	}
}
