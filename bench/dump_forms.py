"""Memory and time of reading one cluster's dump in every form --from-file accepts.

    python -m bench.dump_forms --pods 200000 [--cache DIR] [--runs 3] [--forms "YAML List"]

The synthetic cluster of bench/generate.py (with the pod count asked for) is written as
- a `List` (`kubectl get nodes,pods,rs,deploy -A -o json`),
- `List`s one after another, one per kind (`kubectl get … -o json >> dump.json`),
- a bare JSON array of the same items (`jq .items`),
- single objects one after another (`for o in …; kubectl get $o -o json >> dump.json`),
- a YAML `List` (`kubectl get … -o yaml`: `kind` after `items`),
and each is read by `snapshot.files.load_files` in a child process (wall time, CPU time, peak
RSS; the median of --runs, taken in rounds of one run of each). The floor is `json.load` of
the List, in the same rounds: issue 58's target is every form under 1 GB of RSS and under
1.3 × that floor's time. With the YAML List comes the time of only iterating libyaml's
events over it (PyYAML's CParser.get_event, no value built): the floor of any reader that
builds values from those events.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from bench import generate
from bench.measure import Stats, run

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
READ = ("import sys; from kubectl_tspread.snapshot.files import load_files; "
        "snap = load_files([sys.argv[1]], all_namespaces=True); print(len(snap.pods), len(snap.nodes))")
FLOOR = "import json, sys; json.load(open(sys.argv[1], 'rb'))"
# what any reader built on PyYAML's libyaml binding pays before it makes a value: its events,
# read 1 MiB at a time as files.py feeds them
YAML_EVENTS = ("import sys; from yaml.cyaml import CParser\n"
               "class Pieces:\n    def __init__(self, f): self.f = f\n"
               "    def read(self, n): return self.f.read(1 << 20)\n"
               "get = CParser(Pieces(open(sys.argv[1], 'rb'))).get_event\n"
               "while get() is not None: pass")


def write_forms(directory: str) -> dict[str, str]:
    """The dump of the cluster in `directory` in each form, written once."""
    forms = {"List": generate.ensure_dump(directory)}
    paths = {name: os.path.join(directory, f"dump-{name}.json") for name in ("lists", "array", "objects")}
    if all(os.path.exists(p) for p in paths.values()):
        return {**forms, **{_LABELS[k]: p for k, p in paths.items()}}
    with open(paths["lists"], "wb") as lists, open(paths["array"], "wb") as array, \
            open(paths["objects"], "wb") as objects:
        array.write(b"[")
        first_item = True
        for kind, api_version in generate.DUMP_KINDS:
            prefix = b'{"apiVersion":"%s","kind":"%s",' % (api_version.encode(), kind.encode())
            lists.write(b'{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[')
            first_in_list = True
            with open(os.path.join(directory, f"{kind}.items"), "rb") as f:
                for line in f:
                    obj = prefix + line.rstrip(b"\n")[1:]
                    lists.write((b"" if first_in_list else b",\n") + obj)
                    array.write((b"" if first_item else b",\n") + obj)
                    objects.write(obj + b"\n")
                    first_in_list = first_item = False
            lists.write(b"]}\n")
        array.write(b"]\n")
    return {**forms, **{_LABELS[k]: p for k, p in paths.items()}}


def write_yaml_list(directory: str) -> str:
    """The List as YAML, written once, item by item (a whole-List yaml.dump would hold it all)."""
    import yaml

    path = os.path.join(directory, "dump-list.yaml")
    if os.path.exists(path):
        return path
    with open(path + ".tmp", "w") as out:
        out.write("apiVersion: v1\nitems:\n")
        for kind, api_version in generate.DUMP_KINDS:
            with open(os.path.join(directory, f"{kind}.items"), "rb") as f:
                for line in f:
                    obj = {"apiVersion": api_version, "kind": kind, **json.loads(line)}
                    out.write(yaml.dump([obj], Dumper=yaml.CSafeDumper))
        out.write("kind: List\nmetadata:\n  resourceVersion: ''\n")
    os.replace(path + ".tmp", path)
    return path


_LABELS = {"lists": "Lists one after another", "array": "bare array", "objects": "objects one after another"}
FORMS = ("List", *_LABELS.values(), "YAML List")


def measure(code: str, path: str, stats: Stats) -> None:
    env = dict(os.environ, PYTHONPATH=REPO)
    sample = run([sys.executable, "-c", code, path], env=env, timeout=1800)
    if sample.rc != 0:
        raise SystemExit(f"{code!r} on {path} failed: {sample.stderr}")
    stats.samples.append(sample)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pods", type=int, default=200_000)
    parser.add_argument("--cache", default=os.path.join(REPO, "bench-out"), help="where the clusters are kept")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--forms", action="append", metavar="FORM",
                        help="measure only this form (repeatable; the floor is always measured): "
                             + ", ".join(repr(f) for f in FORMS))
    args = parser.parse_args()
    unknown = sorted(set(args.forms or ()) - set(FORMS))
    if unknown:
        parser.error(f"unknown form(s) {', '.join(map(repr, unknown))}; choose from {', '.join(map(repr, FORMS))}")
    size = generate.Size(f"forms-{args.pods}", max(20, args.pods // 30), args.pods, max(10, args.pods // 150))
    directory = generate.ensure(size, args.cache)
    forms = write_forms(directory)
    forms["YAML List"] = write_yaml_list(directory)
    todo = [("json.load of the List (floor)", FLOOR, forms["List"])]
    for label, path in forms.items():
        if args.forms and label not in args.forms:
            continue
        todo.append((f"load_files: {label}", READ, path))
        if label == "YAML List":
            todo.append(("libyaml events of the YAML List", YAML_EVENTS, path))
    rows = [(label, os.path.getsize(path), Stats()) for label, _, path in todo]
    # one run of each in turn, --runs times: a busy spell of the machine slows every row a
    # little rather than all of one row's runs (the floor's among them)
    for _ in range(args.runs):
        for (_, code, path), (_, _, stats) in zip(todo, rows):
            measure(code, path, stats)
    floor = rows[0][2]
    print(f"{args.pods:,} pods, median of {args.runs} runs")
    # CPU time too: on a shared machine the wall times of one run move with the others' load
    print(f"{'':44} {'file MB':>8} {'wall s':>7} {'x floor':>8} {'CPU s':>7} {'x floor':>8} {'RSS MB':>8}")
    for label, size_bytes, stats in rows:
        print(f"{label:44} {size_bytes / 2**20:8.0f} {stats.wall:7.2f} {stats.wall / floor.wall:8.2f} "
              f"{stats.cpu:7.2f} {stats.cpu / floor.cpu:8.2f} {stats.rss_mb:8.0f}")
    print(json.dumps({label: {"wall": round(s.wall, 2), "cpu": round(s.cpu, 2), "rss_mb": round(s.rss_mb)}
                      for label, _, s in rows}))


if __name__ == "__main__":
    main()
