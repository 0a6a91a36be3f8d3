"""`drain-safe --execute` end to end: main() → the real `kubernetes` client → HTTP on 127.0.0.1.

The cluster is `fakeapi.FakeApiServer` with `fakecluster.FakeCluster` on top: real Status
bodies for cordon and eviction (429 with PDB budget accounting, the multiple-PDB 500,
404), a ReplicaSet controller that recreates evicted pods and a simple scheduler of its
own that binds them. Nothing in the client is patched; tests steer the fake cluster and
listen to the executor's progress records (where a listener may also interrupt it).

Layout used by most tests: zones a, b, c with two nodes each (a1 a2 b1 b2 c1 c2), one
`web` pod per node, zone spread maxSkew 1 (DoNotSchedule), PDB maxUnavailable 1.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from fakeapi import FakeApiServer, raw_node, write_kubeconfig
from fakecluster import MULTIPLE_PDBS, PDB_VIOLATION, FakeCluster, deployment, pdb, ready_pod
from kubectl_tspread.cli import main
from kubectl_tspread.cli import execute as ex
from kubectl_tspread.cli import progress as P
from kubectl_tspread.snapshot.live import RetryPolicy

WEB = {"app": "web", "pod-template-hash": "abc12"}
SPREAD = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
           "labelSelector": {"matchLabels": {"app": "web"}}}]
NODES = {"a1": "a", "a2": "a", "b1": "b", "b2": "b", "c1": "c", "c2": "c"}


@pytest.fixture
def events():
    return []


@pytest.fixture
def settings(monkeypatch, events):
    """Small waits everywhere; every progress record lands in `events`."""
    s = ex.ExecuteSettings(poll_interval=0.01, backoff_base=0.01, max_backoff=0.05, connection_attempts=2,
                           read_retry=RetryPolicy(attempts=2, base=0.01), listeners=(events.append,),
                           interactive=False, stdin=io.StringIO(""))
    monkeypatch.setattr(ex, "SETTINGS", s)
    return s


@pytest.fixture
def api():
    with FakeApiServer() as server:
        yield server


@pytest.fixture
def fake(api):
    cluster = FakeCluster(api)
    api.add(*[raw_node(n, z) for n, z in NODES.items()])
    api.add(*deployment("web", {"app": "web"}, replicas=len(NODES)))
    api.add(*[ready_pod(f"web-abc12-{n}", n, "web-abc12", WEB, spread=SPREAD) for n in NODES])
    api.add(pdb("web", {"app": "web"}, maxUnavailable=1))
    cluster.tick()  # the PDB controller fills in the budget
    return cluster


@pytest.fixture
def kubeconfig(env, api):
    return write_kubeconfig(str(env / "config"), {"fake": api.url}, {"me": {}},
                            {"fake": {"cluster": "fake", "user": "me"}}, "fake")


def drain(capsys, kubeconfig, *args: str, yes: bool = True) -> tuple[int, str, str]:
    argv = ["drain-safe", *args, "--kubeconfig", kubeconfig, "--execute"] + (["--yes"] if yes else [])
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def web_nodes(fake: FakeCluster) -> dict[str, str]:
    """pod name -> node of every live web pod."""
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in fake.pods_of("default", app="web")
            if not p["metadata"].get("deletionTimestamp")}


def unschedulable(fake: FakeCluster) -> list[str]:
    return [n["metadata"]["name"] for n in fake.objs("/api/v1/nodes") if n["spec"].get("unschedulable")]


def actions(events, action: str) -> list[tuple[str, str]]:
    return [(e["object"], e["result"]) for e in events if e["action"] == action]


def on(events_action: str, obj_prefix: str = "", times: int = 1):
    """A listener that runs `fn` the `times`-th time a record matches."""
    def wrap(fn):
        seen = [0]

        def listener(event):
            if event["action"] == events_action and event["object"].startswith(obj_prefix):
                seen[0] += 1
                if seen[0] == times:
                    fn(event)
        return listener
    return wrap


# ---- success -------------------------------------------------------------------------------

def test_drains_step_by_step_and_waits_for_replacements(capsys, kubeconfig, fake, api, settings, events, tmp_path):
    log = tmp_path / "drain.log"
    code, out, err = drain(capsys, kubeconfig, "a1", "b1", "--log", str(log))
    assert code == 0, err
    assert "SAFE" in out  # the plan is shown before anything happens
    assert sorted(unschedulable(fake)) == ["a1", "b1"]
    placed = web_nodes(fake)
    assert "web-abc12-a1" not in placed and "web-abc12-b1" not in placed
    # each replacement stayed in its zone (the only one spread allows) and is Ready
    assert sorted(n for name, n in placed.items() if "-r" in name) == ["a2", "b2"]
    assert all(p["status"]["conditions"][-1] == {"type": "Ready", "status": "True"}
               for p in fake.pods_of("default", app="web"))
    # nothing deleted but through the Eviction API, and each pod evicted once
    assert not api.logged("DELETE")
    assert sorted((r.name, r.status, r.dry_run) for r in fake.evictions) == [
        ("web-abc12-a1", 201, False), ("web-abc12-b1", 201, False)]
    # cordon-first, as kubectl drain: step 1 cordons a1 and b1 before its eviction, step 2
    # cordons nothing and evicts only once step 1's replacement is Ready
    order = [(e["action"], e["object"], e.get("step")) for e in events if e["action"] in (P.CORDON, P.EVICT, P.WAIT)]
    assert order[:3] == [(P.CORDON, "node/a1", 1), (P.CORDON, "node/b1", 1),
                         (P.EVICT, "pod/default/web-abc12-a1", 1)]
    assert not [o for o in order if o[0] == P.CORDON and o[2] == 2]
    assert order.index((P.EVICT, "pod/default/web-abc12-b1", 2)) > order.index((P.WAIT, "", 1))
    # and so do the requests the API server saw: both cordon patches before the first eviction
    writes = [(r.method, r.path) for r in api.requests if r.method in ("PATCH", "POST")]
    assert writes[:3] == [("PATCH", "/api/v1/nodes/a1"), ("PATCH", "/api/v1/nodes/b1"),
                          ("POST", "/api/v1/namespaces/default/pods/web-abc12-a1/eviction")]
    assert "step 1/2: node/a1 cordoned" in err and "step 1/2: node/b1 cordoned" in err
    assert "step 2/2: pod/default/web-abc12-b1 evicted" in err
    assert "kubectl uncordon a1 b1" in err
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert all({"time", "action", "object", "result"} <= set(rec) for rec in lines)
    assert [(r["object"], r["result"]) for r in lines if r["action"] == "evict"] == [
        ("pod/default/web-abc12-a1", "evicted"), ("pod/default/web-abc12-b1", "evicted")]
    assert lines[-1]["action"] == "done" and lines[0]["time"].endswith("Z")


def test_every_plan_of_a_run_is_made_with_the_clis_forked_workers(capsys, kubeconfig, fake, api, settings,
                                                                   monkeypatch):
    """The plan shown and each step's re-plan from live state: all get cli/workers.py's forks
    (when forking is available: here always)."""
    from kubectl_tspread.cli import workers
    from kubectl_tspread.views.drain import plan as planmod

    given, real = [], planmod.plan_drain

    def plan_drain(*args, **kwargs):
        given.append(kwargs.get("workers"))
        return real(*args, **kwargs)

    monkeypatch.setattr(planmod, "plan_drain", plan_drain)  # drain-safe's, imported when it runs
    monkeypatch.setattr(ex, "plan_drain", plan_drain)
    monkeypatch.setattr(workers, "available", lambda: True)
    code, _, err = drain(capsys, kubeconfig, "a1", "b1")
    assert code == 0, err
    assert len(given) >= 3 and all(w is workers.FORKS for w in given)  # the plan shown, then one per step


def test_staged_cordons_cordon_each_step_after_the_one_before(capsys, kubeconfig, fake, api, settings, events):
    """--stage-cordons (the StageCordons remedy): step 2 cordons b1 only once step 1's
    replacement is Ready, and the resume command keeps the flag."""
    code, _, err = drain(capsys, kubeconfig, "a1", "b1", "--stage-cordons")
    assert code == 0, err
    order = [(e["action"], e.get("step")) for e in events if e["action"] in (P.CORDON, P.EVICT, P.WAIT)]
    assert order.index((P.CORDON, 2)) > order.index((P.WAIT, 1)) > order.index((P.EVICT, 1))
    assert [o for o in order if o[0] == P.CORDON] == [(P.CORDON, 1), (P.CORDON, 2)]
    assert sorted(unschedulable(fake)) == ["a1", "b1"]


def test_max_parallel_evicts_the_pods_of_a_step_together(capsys, kubeconfig, fake, api, settings, events):
    api.objects.pop(("/apis/policy/v1/poddisruptionbudgets", "default", "web"))
    code, _, err = drain(capsys, kubeconfig, "a1", "b1", "--max-parallel", "2")
    assert code == 0, err
    steps = {e.get("step") for e in events if e["action"] == P.EVICT}
    assert steps == {1} and len(fake.evictions) == 2


def test_a_pod_already_gone_is_not_an_error(capsys, kubeconfig, fake, api, settings, events):
    @on(P.CORDON, "node/a1")
    def delete_pod(_):
        api.objects.pop(("/api/v1/pods", "default", "web-abc12-a1"))

    settings.listeners += (delete_pod,)
    code, _, err = drain(capsys, kubeconfig, "a1")
    assert code == 0, err
    assert [(r.name, r.status) for r in fake.evictions] == [("web-abc12-a1", 404)]
    assert ("pod/default/web-abc12-a1", "already gone") in actions(events, P.EVICT)
    assert sorted(web_nodes(fake).values()).count("a2") == 2


# ---- PDBs and backoff -----------------------------------------------------------------------

def test_429_then_success_honours_retry_after(capsys, kubeconfig, fake, api, settings, events):
    api.fail("/api/v1/namespaces/default/pods/web-abc12-a1/eviction", 429, times=2, method="POST",
             retry_after="0.2", message=PDB_VIOLATION)
    started = time.monotonic()
    code, _, err = drain(capsys, kubeconfig, "a1")
    assert code == 0, err
    assert time.monotonic() - started >= 0.4  # two waits of Retry-After, not the 0.01s backoff
    retries = actions(events, P.RETRY)
    assert retries == [("pod/default/web-abc12-a1", "retrying in 0.2s")] * 2
    assert PDB_VIOLATION in err
    assert [r.status for r in fake.evictions] == [201]  # the two 429s were injected before the fake


def test_budget_used_up_elsewhere_backs_off_until_it_comes_back(capsys, kubeconfig, fake, api, settings, events):
    """Another web pod turns unready after the plan: the PDB answers 429 (disruptionsAllowed 0)
    until it is Ready again; the executor never gets an eviction past the budget."""
    other = fake.pod("default", "web-abc12-c2")

    @on(P.CORDON, "node/a1")
    def break_other(_):
        other["status"]["conditions"] = [{"type": "Ready", "status": "False"}]

    def heal(cluster):
        if sum(r.status == 429 for r in cluster.evictions) >= 3:
            other["status"]["conditions"] = [{"type": "Ready", "status": "True"}]

    fake.on_tick.append(heal)
    settings.listeners += (break_other,)
    code, _, err = drain(capsys, kubeconfig, "a1")
    assert code == 0, err
    statuses = [r.status for r in fake.evictions]
    assert statuses[-1] == 201 and set(statuses[:-1]) == {429} and len(statuses) >= 4
    assert "The disruption budget web needs 5 healthy pods and has 5 currently" in err


def test_two_pods_of_one_budget_go_in_two_steps_and_never_meet_a_429(capsys, kubeconfig, fake, api, settings,
                                                                      events):
    """a1 holds two web pods and the PDB allows one disruption: the second eviction waits for
    the first replacement to be Ready (the budget is back), so the API never has to refuse."""
    api.add(ready_pod("web-abc12-a1x", "a1", "web-abc12", WEB, spread=SPREAD))
    api.objects[("/apis/apps/v1/replicasets", "default", "web-abc12")]["spec"]["replicas"] = 7
    fake.tick()
    code, _, err = drain(capsys, kubeconfig, "a1")
    assert code == 0, err
    assert [r.status for r in fake.evictions] == [201, 201]
    order = [(e["action"], e.get("step")) for e in events if e["action"] in (P.EVICT, P.WAIT)]
    assert order == [(P.EVICT, 1), (P.WAIT, 1), (P.WAIT, 1), (P.EVICT, 2), (P.WAIT, 2), (P.WAIT, 2)]


def test_timeout_while_the_budget_never_comes_back(capsys, kubeconfig, fake, api, settings, events):
    other = fake.pod("default", "web-abc12-c2")

    @on(P.CORDON, "node/a1")
    def break_other(_):
        other["status"]["conditions"] = [{"type": "Ready", "status": "False"}]

    settings.listeners += (break_other,)
    code, _, err = drain(capsys, kubeconfig, "a1", "--timeout", "300ms")
    assert code == 1
    assert "error: pod/default/web-abc12-a1 still refused when the timeout ran out" in err
    assert {r.status for r in fake.evictions} == {429}
    assert "cordoned nodes: a1" in err and "  kubectl uncordon a1" in err
    assert "pods evicted by this run: none" in err


def test_a_pod_under_two_pdbs_stops_the_run_with_the_apis_500(capsys, kubeconfig, fake, api, settings, events):
    @on(P.CORDON, "node/a1")
    def second_pdb(_):
        api.add(pdb("web-too", {"app": "web"}, minAvailable=1))

    settings.listeners += (second_pdb,)
    code, _, err = drain(capsys, kubeconfig, "a1", "b1")
    assert code == 1
    assert [r.status for r in fake.evictions] == [500]
    assert MULTIPLE_PDBS in err and "make one PDB select it" in err
    assert unschedulable(fake) == ["a1", "b1"]  # cordon-first: step 1 cordoned both; step 2 never started
    assert "web-abc12-a1" in web_nodes(fake)


# ---- stops ----------------------------------------------------------------------------------

def test_a_step_that_became_unsafe_is_not_run(capsys, kubeconfig, fake, api, settings, events):
    """After step 1, node b2 disappears: draining b1 would now empty zone b while it stays a
    domain (cordoned, nodeTaintsPolicy Ignore), so the re-plan is unsafe and b1's pod is left
    alone (b1 itself was cordoned at step 1 with a1: cordon-first)."""
    @on(P.STEP, "nodes a1", times=2)  # "started", then "done"
    def lose_b2(_):
        api.objects.pop(("/api/v1/nodes", "", "b2"))
        api.objects.pop(("/api/v1/pods", "default", "web-abc12-b2"))
        fake.api.objects[("/apis/apps/v1/replicasets", "default", "web-abc12")]["spec"]["replicas"] = 5

    settings.listeners += (lose_b2,)
    code, _, err = drain(capsys, kubeconfig, "a1", "b1")
    assert code == 3
    assert "no longer safe" in err and "CordonedDomainTrap" in err
    assert unschedulable(fake) == ["a1", "b1"]
    assert [r.name for r in fake.evictions] == ["web-abc12-a1"]
    assert "cordoned nodes: a1, b1" in err and "kubectl uncordon a1 b1" in err


def test_an_unsafe_plan_is_never_executed(capsys, kubeconfig, fake, api, settings):
    code, out, err = drain(capsys, kubeconfig, "a1", "a2")  # the whole zone a: cordoned-domain trap
    assert code == 3
    assert "UNSAFE" in out and "nothing was changed" in err
    assert not api.logged("PATCH") and not api.logged("POST")


def test_a_replacement_no_node_can_take_stops_with_why_pending(capsys, kubeconfig, fake, api, settings, events):
    """a2 gets a NoSchedule taint after the re-plan: zone a is the only zone spread allows, so
    the replacement stays Pending; the run stops with the why-pending explanation."""
    @on(P.CORDON, "node/a1")
    def taint_a2(_):
        fake.api.objects[("/api/v1/nodes", "", "a2")]["spec"]["taints"] = [
            {"key": "maintenance", "value": "yes", "effect": "NoSchedule"}]

    settings.listeners += (taint_a2,)
    code, _, err = drain(capsys, kubeconfig, "a1", "b1", "--timeout", "10s")
    assert code == 1
    assert "cannot be scheduled" in err
    assert "fits none of 6 nodes" in err  # why-pending's report for the replacement
    assert "didn't match pod topology spread constraints" in err
    assert "replacements not Ready yet: default/web-abc12-r" in err and "(Pending)" in err
    assert unschedulable(fake) == ["a1", "b1"]  # cordon-first: both at step 1


def test_timeout_waiting_for_a_replacement_explains_it(capsys, kubeconfig, fake, api, settings, events):
    fake.hold_pending.add("default/web-abc12-r")  # the scheduler never gets to it
    code, _, err = drain(capsys, kubeconfig, "a1", "--timeout", "300ms")
    assert code == 1
    assert "step 1 did not finish within --timeout 0.3s" in err and "5/6 pods Ready" in err
    assert "Pod default/web-abc12-r" in err and "fits 1 of 6 nodes" in err  # schedulable, just not scheduled


# ---- interruption and resume ---------------------------------------------------------------

def test_interrupted_after_an_eviction_then_resumed(capsys, kubeconfig, fake, api, settings, events):
    @on(P.EVICT, "pod/default/web-abc12-a1")
    def ctrl_c(_):
        raise KeyboardInterrupt

    settings.listeners += (ctrl_c,)
    code, _, err = drain(capsys, kubeconfig, "a1", "b1")
    assert code == 130
    # cordon-first: step 1 cordoned a1 and b1 before evicting a1's pod
    assert "cordoned nodes: a1, b1" in err and "pods evicted by this run: default/web-abc12-a1" in err
    resume = f"kubectl tspread drain-safe a1 b1 --kubeconfig {kubeconfig} --execute --yes"
    assert f"  {resume}" in err and "  kubectl uncordon a1 b1" in err
    assert "error: drain interrupted" in err
    assert unschedulable(fake) == ["a1", "b1"]

    settings.listeners = (events.append,)
    events.clear()
    patches_before = len(api.logged("PATCH"))
    code, _, err = drain(capsys, kubeconfig, "a1", "b1")
    assert code == 0, err
    assert api.logged("PATCH")[patches_before:] == []  # both stay as they are: no cordon is redone
    assert not actions(events, P.CORDON)
    assert [r.name for r in fake.evictions] == ["web-abc12-a1", "web-abc12-b1"]  # a1's pod only once
    assert sorted(unschedulable(fake)) == ["a1", "b1"]


def test_interrupt_with_evictions_in_flight_lets_them_finish(capsys, kubeconfig, fake, api, settings, events):
    api.objects.pop(("/apis/policy/v1/poddisruptionbudgets", "default", "web"))

    @on(P.EVICT)
    def ctrl_c(_):
        # Ctrl-C once both calls have reached the server: a call still queued in the pool when
        # the interrupt comes is cancelled, not in flight (that race made this test flaky)
        deadline = time.monotonic() + 10
        while len(fake.evictions) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        raise KeyboardInterrupt

    settings.listeners += (ctrl_c,)
    code, _, err = drain(capsys, kubeconfig, "a1", "b1", "--max-parallel", "2")
    assert code == 130
    assert sorted(r.name for r in fake.evictions) == ["web-abc12-a1", "web-abc12-b1"]
    # the call still in flight when Ctrl-C came finished and is reported
    evicted = next(line for line in err.splitlines() if "pods evicted by this run" in line)
    assert "default/web-abc12-a1" in evicted and "default/web-abc12-b1" in evicted
    assert "kubectl uncordon a1 b1" in err


def test_resume_waits_for_replacements_an_interrupted_run_left_pending(capsys, kubeconfig, fake, api, settings,
                                                                       events):
    fake.hold_pending.add("default/web-abc12-r")

    @on(P.WAIT, "", times=1)
    def ctrl_c(_):
        raise KeyboardInterrupt

    settings.listeners += (ctrl_c,)
    code, _, err = drain(capsys, kubeconfig, "a1", "b1")
    assert code == 130
    assert "replacements not Ready yet: default/web-abc12-r" in err
    fake.hold_pending.clear()
    settings.listeners = (events.append,)
    events.clear()
    code, _, err = drain(capsys, kubeconfig, "a1", "b1")
    assert code == 0, err
    assert [r.name for r in fake.evictions] == ["web-abc12-a1", "web-abc12-b1"]
    assert sorted(n for name, n in web_nodes(fake).items() if "-r" in name) == ["a2", "b2"]


def test_sigterm_in_a_real_process_reports_and_exits_130(kubeconfig, fake, env):
    fake.hold_pending.add("default/web-abc12-r")  # keeps the run waiting
    proc = subprocess.Popen([sys.executable, "-m", "kubectl_tspread", "drain-safe", "a1", "--kubeconfig", kubeconfig,
                             "--execute", "--yes"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            env={**os.environ, "HOME": str(env / "home")})
    deadline = time.monotonic() + 30
    while not fake.evictions and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "terminated (SIGTERM)" in err and "cordoned nodes: a1" in err
    assert "pods evicted by this run: default/web-abc12-a1" in err and "kubectl uncordon a1" in err


def test_lost_connection_reports_the_last_known_state(capsys, kubeconfig, fake, api, settings, events):
    fake.hold_pending.add("default/web-abc12-r")

    @on(P.WAIT, "", times=1)
    def server_dies(_):
        api.fail("*", 503, times=None, method="GET")

    settings.listeners += (server_dies,)
    code, _, err = drain(capsys, kubeconfig, "a1")
    assert code == 1
    assert "as last read" in err and "cordoned nodes: a1" in err and "kubectl uncordon a1" in err


# ---- dry run and confirmation ------------------------------------------------------------

def test_server_dry_run_changes_nothing(capsys, kubeconfig, fake, api, settings, events):
    before = web_nodes(fake)
    code, _, err = drain(capsys, kubeconfig, "a1", "b1", "--dry-run", "server", yes=False)
    assert code == 0, err
    assert unschedulable(fake) == [] and web_nodes(fake) == before
    assert all(r.dry_run and r.status == 201 for r in fake.evictions) and len(fake.evictions) == 2
    assert [r.query.get("dryRun") for r in api.logged("PATCH")] == ["All", "All"]
    assert "pod/default/web-abc12-a1 evicted (server dry run)" in err
    assert "nothing was changed" in err


def test_server_dry_run_reports_what_a_pdb_would_refuse(capsys, kubeconfig, fake, api, settings, events):
    api.fail("/api/v1/namespaces/default/pods/web-abc12-b1/eviction", 429, times=None, method="POST",
             message=PDB_VIOLATION)
    code, _, err = drain(capsys, kubeconfig, "a1", "b1", "--dry-run", "server")
    assert code == 3
    assert ("pod/default/web-abc12-b1", "refused (server dry run)") in actions(events, P.EVICT)
    assert "1 eviction(s) would be refused now" in err and unschedulable(fake) == []


def test_without_a_terminal_and_without_yes_it_refuses(capsys, kubeconfig, fake, api, settings):
    code, out, err = drain(capsys, kubeconfig, "a1", yes=False)
    assert code == 1
    assert "error: refusing to drain without confirmation" in err and "--yes" in err
    assert not api.logged("PATCH") and not api.logged("POST")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("answer, proceeds", [("y\n", True), ("yes\n", True), ("n\n", False), ("\n", False)],
                         ids=["y proceeds", "yes proceeds", "n cancels", "empty answer cancels"])
def test_confirmation_on_a_terminal(answer, proceeds, capsys, kubeconfig, fake, api, settings):
    settings.stdin = _Tty(answer)
    code, _, err = drain(capsys, kubeconfig, "a1", yes=False)
    assert "Drain a1 in 1 step(s), evicting 1 pod(s)? [y/N]" in err
    assert (code == 0) is proceeds
    assert bool(api.logged("PATCH")) is proceeds
    if not proceeds:
        assert "drain cancelled; nothing was changed" in err


# ---- the resume command ---------------------------------------------------------------------

@pytest.mark.parametrize("kw, expected", [
    ({}, "kubectl tspread drain-safe a1 'node b' --execute --yes"),
    ({"flags": (True, True, True), "max_parallel": 2},
     "kubectl tspread drain-safe a1 'node b' --ignore-daemonsets --force --delete-emptydir-data --max-parallel 2 "
     "--execute --yes"),
    ({"context": "prod", "as_groups": ("ops", "sre"), "request_timeout": 30.0},
     "kubectl tspread drain-safe a1 'node b' --context prod --as-group ops --as-group sre --request-timeout 30s "
     "--execute --yes"),
    ({"timeout": 90.0, "log": "/tmp/d.log"},
     "kubectl tspread drain-safe a1 'node b' --execute --timeout 90s --log /tmp/d.log --yes"),
    ({"timeout": None}, "kubectl tspread drain-safe a1 'node b' --execute --timeout 0 --yes"),
    ({"stage_cordons": True}, "kubectl tspread drain-safe a1 'node b' --stage-cordons --execute --yes"),
], ids=["defaults", "kubectl drain flags and --max-parallel", "connection flags", "timeout and log", "no timeout",
        "staged cordons"])
def test_resume_command_repeats_the_run(kw, expected):
    from kubectl_tspread.model.plan import PlanOptions
    from kubectl_tspread.views.drain.pods import DrainFlags
    from kubectl_tspread.cli.resume import resume_command
    from kubectl_tspread.cli.options import SourceOptions

    options = PlanOptions(DrainFlags(*kw.get("flags", (False, False, False))), max_parallel=kw.get("max_parallel", 1),
                          stage_cordons=kw.get("stage_cordons", False))
    source = SourceOptions(context=kw.get("context"), as_groups=kw.get("as_groups", ()),
                           request_timeout=kw.get("request_timeout"))
    assert resume_command(["a1", "node b"], options, source, kw.get("timeout", 300.0), kw.get("log")) == expected


# ---- interruptions tell the truth (issue 57 item 10, issue 58's drain edges) ---------------

@pytest.fixture
def ctrl_c():
    """Ctrl-C raises KeyboardInterrupt in this process while the test runs, even when the suite
    started with SIGINT ignored (a background job of a shell without job control: Python then
    leaves it ignored, and a signal sent to the main thread would be lost)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _interrupt_main_on(api, method: str, pattern: str, sig=signal.SIGINT, armed=None):
    """Send `sig` to this process's main thread when the server receives the next matching
    request (while the client waits for its answer); `armed` (a one-item list) gates it."""
    import threading

    main_thread = threading.main_thread().ident
    armed = armed if armed is not None else [True]

    def fire(req) -> bool:
        if armed[0]:
            armed[0] = False
            signal.pthread_kill(main_thread, sig)
            time.sleep(0.2)  # the client gives up before the answer
        return False  # never a fault: the server then handles the request as usual

    api.fail(pattern, 500, times=None, method=method, when=fire)
    return armed


def test_an_eviction_sent_but_unanswered_at_ctrl_c_is_reported_as_outcome_unknown(
        capsys, kubeconfig, fake, api, settings, events, tmp_path, ctrl_c):
    log = tmp_path / "drain.log"
    _interrupt_main_on(api, "POST", "/api/v1/namespaces/default/pods/web-abc12-a1/eviction")
    code, _, err = drain(capsys, kubeconfig, "a1", "--log", str(log))
    assert code == 130
    # the server took the eviction after the client stopped waiting (as the issue saw)
    assert [r.name for r in fake.evictions] == ["web-abc12-a1"]
    assert ("  evictions sent, outcome unknown (the run stopped before the answer; check with kubectl get pod): "
            "default/web-abc12-a1") in err
    assert "pods evicted by this run: none" in err and "nothing is in flight" not in err
    assert "1 eviction(s) sent with no answer yet (outcome unknown)" in err
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert {"action": P.EVICT, "object": "pod/default/web-abc12-a1", "result": "sent, outcome unknown"}.items() \
        <= next(r for r in records if r["action"] == P.EVICT).items()
    assert next(r for r in records if r["action"] == P.INTERRUPT)["unknown"] == ["default/web-abc12-a1"]


def test_an_unexpected_error_mid_drain_still_prints_the_state_and_a_stop_record(
        capsys, kubeconfig, fake, api, settings, events, tmp_path):
    log = tmp_path / "drain.log"

    @on(P.EVICT, "pod/default/web-abc12-a1")
    def fault(_):
        raise OverflowError("cannot convert float infinity to integer")  # e.g. Retry-After: inf

    settings.listeners += (fault,)
    code, _, err = drain(capsys, kubeconfig, "a1", "b1", "--log", str(log))
    assert code == 1
    assert "State of the drain:" in err and "cordoned nodes: a1" in err
    assert "pods evicted by this run: default/web-abc12-a1" in err
    assert f"kubectl tspread drain-safe a1 b1 --kubeconfig {kubeconfig} --execute --log {log} --yes" in err
    assert "  kubectl uncordon a1" in err
    assert [line for line in err.splitlines() if line.startswith("error:")] == [
        "error: unexpected OverflowError: cannot convert float infinity to integer (rerun with -v for the traceback "
        "and report it as a bug)"] and "Traceback" not in err
    stop = [json.loads(line) for line in log.read_text().splitlines() if '"stop"' in line]
    assert stop and stop[-1]["result"] == "drain stopped by an unexpected error"
    assert stop[-1]["message"].startswith("OverflowError: ")


def test_a_resume_waits_for_the_earlier_runs_replacements_before_judging_the_plan(
        capsys, kubeconfig, fake, api, settings, events, monkeypatch):
    fake.ready_ticks = 40  # replacements take a while to become Ready: the PDB's budget stays used

    @on(P.EVICT, "pod/default/web-abc12-a1")
    def ctrl_c(_):
        raise KeyboardInterrupt

    settings.listeners += (ctrl_c,)
    code, _, err = drain(capsys, kubeconfig, "a1", "b1")
    assert code == 130
    settings.listeners = (events.append,)
    # judged at once, the interrupted run's own eviction still holds the budget: UNSAFE (PdbBlocks)
    monkeypatch.setattr(ex, "budget_held", lambda snapshot, plan: None)
    code, out, err = drain(capsys, kubeconfig, "a1", "b1")
    assert code == 3 and "PdbBlocks" in out
    monkeypatch.undo()
    monkeypatch.setattr(ex, "SETTINGS", settings)
    code, out, err = drain(capsys, kubeconfig, "a1", "b1")
    assert code == 0, err
    assert "their evictions still hold the PodDisruptionBudget, so the plan is judged once they are Ready" in err
    assert [r.name for r in fake.evictions if r.status == 201] == ["web-abc12-a1", "web-abc12-b1"]


def test_a_second_ctrl_c_does_not_blame_the_api_server(capsys, kubeconfig, fake, api, settings, events, ctrl_c):
    armed = [False]
    _interrupt_main_on(api, "GET", "*", armed=armed)

    @on(P.EVICT, "pod/default/web-abc12-a1")
    def ctrl_c(_):
        armed[0] = True  # the state block's fresh read gets the second Ctrl-C
        raise KeyboardInterrupt

    settings.listeners += (ctrl_c,)
    code, _, err = drain(capsys, kubeconfig, "a1", "b1")
    assert code == 130
    assert "State of the drain (as last read; interrupted again before the cluster was read afresh):" in err
    assert "cannot be reached" not in err
    assert "cordoned nodes: a1" in err and "kubectl uncordon a1" in err


def test_the_resume_command_drops_nodes_that_no_longer_exist(capsys, kubeconfig, fake, api, settings, events):
    @on(P.EVICT, "pod/default/web-abc12-a1")
    def node_deleted_then_ctrl_c(_):
        api.objects.pop(("/api/v1/nodes", "", "b1"))
        raise KeyboardInterrupt

    settings.listeners += (node_deleted_then_ctrl_c,)
    code, _, err = drain(capsys, kubeconfig, "a1", "b1")
    assert code == 130
    assert f"  kubectl tspread drain-safe a1 --kubeconfig {kubeconfig} --execute --yes" in err
    assert "drain-safe a1 b1" not in err


def test_sigterm_while_reading_the_cluster_for_execute_is_a_clean_interrupt(kubeconfig, fake, api, env):
    pid = []

    def term(req) -> bool:
        if pid:
            os.kill(pid.pop(), signal.SIGTERM)
            time.sleep(0.2)
        return False

    api.fail("/api/v1/pods", 500, times=None, method="GET", when=term)
    proc = subprocess.Popen([sys.executable, "-m", "kubectl_tspread", "drain-safe", "a1", "--kubeconfig", kubeconfig,
                             "--execute", "--yes"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            env={**os.environ, "HOME": str(env / "home")})
    pid.append(proc.pid)
    out, err = proc.communicate(timeout=60)
    # before: killed by the signal (-15), silently
    assert proc.returncode == 130, err
    assert out == "" and [line for line in err.splitlines() if line] == ["error: aborted"]
    assert not api.logged("PATCH") and not fake.evictions


@pytest.mark.parametrize("flag, want", [("1.33", "1.33"), (None, "1.37")],
                         ids=["--kube-version 1.33 holds for the re-reads", "no flag: the server's minor"])
def test_the_re_reads_before_each_step_follow_the_plans_kube_version(kubeconfig, fake, flag, want):
    from kubectl_tspread.engine import versions
    from kubectl_tspread.cli.options import SourceOptions
    from kubectl_tspread.snapshot.live import connect

    source = SourceOptions(kubeconfig=kubeconfig, kube_version=flag)
    kube = ex.kube_options(source)
    snap = ex.live_reader(kube, connect(kube), source)()
    assert versions.rules_for(snap.kube_version).minor == versions.rules_for(want).minor


# ---- a 2xx that carries a failed Status (issue 58, third adversarial round) -----------------

def _failed_status_with_200(api, path: str, method: str, body: dict, times: int) -> None:
    from fakeapi import Fault

    api.faults.append(Fault(method, path, 200, times, None, body))


def test_an_eviction_answered_200_with_a_429_status_is_retried_not_taken_as_done(capsys, kubeconfig, fake, api,
                                                                                settings, events):
    from fakeapi import status_body

    # a proxy that answers 200 with the API server's Status: client-go reads it as the 429 it carries;
    # before, the pod was recorded as evicted and the step waited for it to go until --timeout
    _failed_status_with_200(api, "/api/v1/namespaces/default/pods/web-abc12-a1/eviction", "POST",
                            status_body(429, PDB_VIOLATION), times=2)
    code, _, err = drain(capsys, kubeconfig, "a1", "--timeout", "20s")
    assert code == 0, err
    assert actions(events, P.RETRY) == [("pod/default/web-abc12-a1", "retrying in 0.0s")] * 2
    assert [r.status for r in fake.evictions] == [201]


@pytest.mark.parametrize("body, said", [
    ({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403, "reason": "Forbidden",
      "message": "nodes \"a1\" is forbidden"}, "cannot patch nodes"),
    ({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 0, "message": "webhook said no"},
     "answered PATCH /api/v1/nodes/a1 with 200 and a Status (Failure: webhook said no)"),
], ids=["a 403 Status with 200", "a Status of no code with 200"])
def test_a_cordon_answered_200_with_a_failed_status_stops_before_any_eviction(capsys, kubeconfig, fake, api, settings,
                                                                             events, body, said):
    _failed_status_with_200(api, "/api/v1/nodes/a1", "PATCH", body, times=None)

    @on(P.EVICT)
    def stop(_):  # before, pods were evicted from the schedulable node step after step, without end
        raise KeyboardInterrupt

    settings.listeners += (stop,)
    code, out, err = drain(capsys, kubeconfig, "a1", "--timeout", "5s")
    # before: "cordoned", and the node's pods evicted with the node still schedulable
    assert code == 1, err
    assert not actions(events, P.CORDON) and not fake.evictions and not unschedulable(fake)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and said in errors[0], err


def test_a_pod_replaced_under_its_name_mid_step_is_not_evicted_in_its_place(capsys, kubeconfig, fake, api, settings,
                                                                            events):
    """The eviction names the uid the step's re-read saw: when another pod has taken the name by the
    time it is sent (a StatefulSet's replacement, or a retry after the first eviction went through),
    that pod is not evicted (the API server's 409 on the uid precondition: the planned pod is gone)."""
    api.fail("/api/v1/namespaces/default/pods/web-abc12-a1/eviction", 429, times=1, method="POST",
             retry_after="0", message=PDB_VIOLATION)

    @on(P.RETRY, "pod/default/web-abc12-a1")
    def replace_it(_):
        fake.pod("default", "web-abc12-a1")["metadata"]["uid"] = "uid-a-successor"

    settings.listeners += (replace_it,)
    code, _, err = drain(capsys, kubeconfig, "a1", "--timeout", "20s")
    assert code == 0, err
    # before: the successor was evicted (201) in the planned pod's place, by the retry; now the
    # retry is refused, and the successor (still on a1) is evicted only by a step planned from a re-read
    assert [(r.name, r.status) for r in fake.evictions] == [("web-abc12-a1", 409), ("web-abc12-a1", 201)]
    records = [(e["action"], e["result"]) for e in events if e["action"] in (P.EVICT, P.REPLAN)]
    gone = records.index((P.EVICT, "already gone"))
    assert any(action == P.REPLAN for action, _ in records[gone:]), records
