"""Output of `why-pending`: the words for the report's codes, the human report, and the
PendingReport view-model for -o json|yaml (public API: change only additively)."""

from __future__ import annotations

from typing import Any, Sequence

from kubectl_tspread.views import blockers as B, pending as P
from kubectl_tspread.model import (
    ADD_LARGER_NODE,
    ADD_NODE,
    ADD_NODE_WITH_LABELS,
    DELETE_NODES,
    EVICT_LOWER_PRIORITY,
    LABEL_NODES,
    LOWER_MIN_DOMAINS,
    LOWER_REQUEST,
    RAISE_MAX_SKEW,
    SCHEDULE_ANYWAY_ACTION,
    UNCORDON,
)
from kubectl_tspread.model.quantity import format_quantity
from kubectl_tspread.render.console import Page, table
from kubectl_tspread.render.changes import WHY_PENDING, change_text, change_view
from kubectl_tspread.render.structured import API_VERSION, Stream, camel_keys, constraint_view, warnings_view
from kubectl_tspread.render.text import short_key, side_effect_text, trap_message

_RESOURCE_REASONS = ("Insufficient ", "Too many pods")
_CORDON_REASON = "node(s) were unschedulable"


# -- words -----------------------------------------------------------------------------------

def _names(values: Sequence[str]) -> str:
    vals = list(values)
    return vals[0] if len(vals) == 1 else ", ".join(vals[:-1]) + " and " + vals[-1]


def _domains(key: str, values: Sequence[str]) -> str:
    word = short_key(key)
    return f"{word} {_names(values)}" if len(values) == 1 else f"{word}s {_names(values)}"


def requests_text(requests: dict[str, int]) -> str:
    """`1500m cpu, 512Mi memory`: quantities as people write them."""
    parts = [f"{format_quantity(r, v)} {r}" for r, v in sorted(requests.items()) if v > 0 and r != "pods"]
    return ", ".join(parts)


def summary_text(s: P.SpreadSummary) -> str:
    """"Spread allows only zone c (a=5 b=5 c=3, maxSkew 1); zone c's 3 nodes are full (Insufficient cpu)."""
    p = s.params
    counts = " ".join(f"{v}={n}" for v, n in p["counts"])
    numbers = f"{counts}, maxSkew {p['max_skew']}"
    if s.code == P.NO_DOMAINS:
        return (f"No node makes a {short_key(p['key'])} domain for this constraint (node affinity, "
                f"nodeSelector, untolerated taints under nodeTaintsPolicy Honor or a missing "
                f"{p['key']} label keep every node out): spread is not what blocks the pod.")
    if s.code == P.NO_DOMAIN_ALLOWED:
        if p["min_forced_zero"]:
            return (f"Spread allows no {short_key(p['key'])} ({numbers}): minDomains {p['min_domains']} "
                    f"pins the global minimum to 0, so every domain already holds maxSkew matching pods.")
        return f"Spread allows no {short_key(p['key'])} ({numbers}, global minimum {p['global_min']})."
    allowed = p["allowed"]
    if s.code == P.SPREAD_NOT_BLOCKING:
        return (f"Spread allows {_domains(p['key'], allowed)} ({numbers}), where {p['fit_nodes']} "
                f"node{'s pass' if p['fit_nodes'] != 1 else ' passes'} every other filter: "
                f"this constraint is not what blocks the pod.")
    reasons = [r for r, _ in p["reasons"]]
    if reasons and all(r.startswith(_RESOURCE_REASONS) for r in reasons):
        state = "full"
    elif reasons == [_CORDON_REASON]:
        state = "cordoned"
    else:
        state = "rejected by other filters"
    why = reasons[0] if len(reasons) == 1 else ", ".join(f"{n} {r}" for r, n in p["reasons"])
    owner = f"{_domains(p['key'], allowed)}'s" if len(allowed) == 1 else "their"
    n = p["blocked_nodes"]
    text = (f"Spread allows only {_domains(p['key'], allowed)} ({numbers}); {owner} {n} "
            f"node{'s are' if n != 1 else ' is'} {state} ({why})")
    if p["fit_elsewhere"]:
        elsewhere = _domains(p["key"], p["fit_elsewhere"])
        text += f"; nodes that pass the other filters are only in {elsewhere}, which spread forbids"
    return text + "."


def _n_nodes(n: int) -> str:
    return f"{n} node{'s' if n != 1 else ''}"


def _some(names: Sequence[str], limit: int = 3) -> str:
    names = list(names)
    return _names(names) if len(names) <= limit else f"{', '.join(names[:limit])} and {len(names) - limit} more"


def blocker_text(b: B.Blocker) -> str:
    """One sentence for one blocker, naming what the user can act on."""
    p, n = b.params, len(b.nodes)
    if b.code == B.REQUEST_ABOVE_ALLOCATABLE:
        r = p["resource"]
        return (f"The pod requests {format_quantity(r, p['request'])} {r}, more than any node's whole "
                f"allocatable {r} (the largest is {format_quantity(r, p['largest'])}, on node {p['node']}): "
                f"no node can hold it however empty, until a larger node joins or the request shrinks.")
    if b.code == B.NODE_AFFINITY_UNMATCHED:
        parts = []
        if p["selector"]:
            parts.append(f"no node carries nodeSelector {', '.join(p['selector'])}")
        for t in p["terms"]:
            parts.append(f"required node affinity term {t['term']} ({', '.join(t['requirements'])}) "
                         f"matches no node")
        if not parts:
            parts.append(f"only {p['matching']} node(s) match the pod's nodeSelector and required node "
                         f"affinity")
        return f"Node affinity refuses {_n_nodes(n)}: " + "; ".join(parts) + "."
    if b.code == B.VOLUME_CONFLICT and p["volumes"]:
        vols = []
        for v in p["volumes"]:
            where = (f"zone{'s' if len(v['zones']) != 1 else ''} {_names(v['zones'])}" if v["zones"]
                     else f"node{'s' if len(v['nodes']) != 1 else ''} {_some(v['nodes'])}" if v["nodes"]
                     # required node affinity with no terms, or terms no node matches (In with no values)
                     else "no node at all (its required node affinity matches none)")
            vols.append(f"volume {v['pv']} (claim {v['claim']}) is pinned to {where}")
        return f"{'; '.join(vols)}: {_n_nodes(n)} outside it are refused ({b.reason})."
    if b.code == B.NO_CAPACITY:
        return f"{_n_nodes(n)} lack room for the pod ({b.reason}): {_some(b.nodes)}."
    if b.code == B.CORDONED:
        return f"{_n_nodes(n)} are cordoned: {_some(b.nodes)}."
    if b.code in (B.TAINTED, B.AUTOSCALER_REMOVING):
        taints = "; ".join(f"{t['taint']} on {_some(t['nodes'])}" for t in p["taints"])
        if b.code == B.AUTOSCALER_REMOVING:
            return (f"{_n_nodes(n)} are being removed by {' and '.join(p['autoscalers'])} ({taints}): "
                    f"wait for their deletion rather than removing the taint.")
        return f"{_n_nodes(n)} carry taints the pod does not tolerate: {taints}."
    if b.code == B.MISSING_NODE_FEATURES and p["missing"]:
        lacking = "; ".join(f"{m['feature']} on {_some(m['nodes'])}" for m in p["missing"])
        declaring = (f" (every one is declared by {_some(p['declaring'])})" if p["declaring"]
                     else " (no node declares every one)")
        return (f"{_n_nodes(n)} do not declare node features the pod's spec requires, in their "
                f"status.declaredFeatures: {lacking}{declaring}. A node declares what its kubelet "
                f"supports: upgrade or reconfigure the nodes, or drop the fields that need it.")
    if b.code == B.PREFILTER_REJECTED:
        return f"The pod is rejected before any node is looked at: {b.reason}."
    if b.code == B.SPREAD:
        return f"Topology spread refuses {_n_nodes(n)} ({b.reason})."
    return f"{b.plugin} refuses {_n_nodes(n)}: {b.reason}."


def answer(r: P.PendingReport) -> tuple[str, str] | None:
    """(code, sentence): the one-line answer, from the most decisive blocker; None when the pod fits."""
    if not r.blockers:
        return None
    c = r.deciding_constraint
    if c is not None:
        return r.blockers[0].code, summary_text(c.summary)
    return r.blockers[0].code, blocker_text(r.blockers[0])


def trap_text(trap) -> str:
    if trap.code == P.VOLUME_PINNING:
        p = trap.params
        allowed = _domains(p["key"], p["allowed"]) if p["allowed"] else "no domain"
        return (f"volume {_names(p['volumes'])} pins the pod to {_domains(p['key'], p['pinned'])}, "
                f"which spread forbids (it allows {allowed}, maxSkew {p['max_skew']}): the pod waits "
                f"until the skew changes there.")
    return trap_message(trap)


def cause_text(code: str, report: P.PendingReport) -> str:
    pod, live = report.pod, report.live
    if code == P.CAUSE_OTHER_SCHEDULER:
        return (f"the pod names schedulerName {pod.scheduler_name}: that scheduler wrote the message, "
                f"and it may run other filters than default-scheduler")
    if code == P.CAUSE_NOMINATED_NODE:
        return (f"the pod is nominated to node {pod.nominated_node} (preemption in progress): the "
                f"scheduler holds room there and evaluates that node first")
    if code == P.CAUSE_STALE_MESSAGE:
        when = f" from {live.time}" if live is not None and live.time else ""
        return (f"the live message{when} is older than the last change in the snapshot (nodes or pods "
                f"added since, or another node count): the scheduler has not retried since")
    return ("the scheduler may run a profile this snapshot cannot show (custom plugins or their "
            "arguments, extenders, volume limits, dynamic resources)")


def suggestion_text(s) -> str:
    p = s.params
    a = s.action
    shared = change_text(s)
    if a == RAISE_MAX_SKEW:
        return f"{shared}, the smallest value that lets the pod in"
    if a == ADD_NODE:
        need = requests_text(p["requests"])
        return shared + (f" (the pod requests {need})" if need else "")
    if shared is not None:
        return shared
    if a == UNCORDON:
        return f"uncordon node {p['node']} (kubectl uncordon {p['node']})"
    if a == LABEL_NODES:
        labels = sorted({f"{k}={v}" for changes in p["labels"].values() for k, v in changes.items()})
        plural = "s" if len(p["nodes"]) != 1 else ""
        text = f"label node{plural} {_names(p['nodes'])} with {', '.join(labels)}"
        if p["guessed"]:
            text += " (a value spread allows today; use the node's real topology value)"
        return text
    if a == DELETE_NODES:
        nodes = _some(p["nodes"])
        if p.get("autoscalers"):
            return (f"let {' and '.join(p['autoscalers'])} finish deleting the Node objects of "
                    f"{_domains(p['topologyKey'], p['domains'])} ({nodes}); do not remove its taint: until they "
                    f"are gone they count as domains with 0 pods")
        destroys = any(e.destructive for e in s.side_effects)
        if destroys:
            return (f"delete the Node objects of {_domains(p['topologyKey'], p['domains'])} ({nodes}), which "
                    f"still hold running pods or volumes (see below): cordoned, they count as domains "
                    f"with 0 matching pods; drain them first and delete them once they are empty")
        return (f"delete the Node objects of drained {_domains(p['topologyKey'], p['domains'])} "
                f"({nodes}), which are empty: cordoned, they still count as domains with 0 pods")
    if a == LOWER_MIN_DOMAINS:
        return (f"lower minDomains on the {p['topologyKey']} constraint from {p['old']} to {p['minDomains']}, "
                f"the number of domains that exist")
    if a == EVICT_LOWER_PRIORITY:
        return (f"evict lower-priority pod{'s' if len(p['pods']) != 1 else ''} {_names(p['pods'])} "
                f"(priority {max(p['priorities'])} < {p['priority']}) from node {p['node']} to free room")
    if a == ADD_NODE_WITH_LABELS:
        labels = ", ".join(f"{k}={v}" for k, v in p["labels"].items())
        drop = f", without {', '.join(p['dropped'])}" if p["dropped"] else ""
        return f"add a node like {p['like']} labelled {labels or '(as it is)'}{drop}"
    if a == ADD_LARGER_NODE:
        sizes = ", ".join(f"{format_quantity(r, v)} {r}" for r, v in p["allocatable"].items())
        largest = ", ".join(f"{format_quantity(r, v)} {r}" for r, v in p["largest"].items())
        where = f" in {short_key(p['topologyKey'])} {p['domain']}" if p.get("domain") else ""
        return (f"add a node like {p['like']}{where} with at least {sizes} allocatable "
                f"(the largest now: {largest})")
    if a == LOWER_REQUEST:
        change = ", ".join(f"{r} from {format_quantity(r, p['old'][r])} to {format_quantity(r, v)}"
                           for r, v in p["new"].items())
        return f"lower the pod's request of {change}, what the roomiest node has free"
    if a == SCHEDULE_ANYWAY_ACTION:
        return (f"switch the {p['topologyKey']} constraint to whenUnsatisfiable: ScheduleAnyway (spread becomes "
                f"a preference; skew may then exceed maxSkew {p['maxSkew']})")
    return f"{a} {p}"


def not_pending_text(item: P.NotPending) -> str:
    p = item.pod
    if p.terminating:
        return f"pod {p.name} is terminating; nothing to explain"
    if p.node_name:
        return f"pod {p.name} is {p.phase} on node {p.node_name}; nothing to explain"
    return f"pod {p.name} is {p.phase}; nothing to explain"


# -- -o json|yaml ----------------------------------------------------------------------------

def _failure(f) -> dict[str, str] | None:
    return None if f is None else {"plugin": f.plugin, "status": f.status, "reason": f.reason}


def _node_view(v) -> dict[str, Any]:
    return {"name": v.node, "status": v.status, "firstFailure": _failure(v.first),
            "failures": [_failure(f) for f in v.failures], "stage": v.stage}


def _constraint_entry(c: P.ConstraintExplanation) -> dict[str, Any]:
    doc = constraint_view(c.state, (), c.traps, trap_text)
    doc["domains"] = [
        {"value": d.value, "pods": d.pods, "nodes": len(d.nodes), "headroom": d.headroom,
         "skewIfPlaced": d.skew_if_placed, "allowed": d.allowed, "fitNodes": list(d.fit_nodes),
         "otherFilters": [{"reason": r, "nodes": n} for r, n in d.blockers]}
        for d in c.domains
    ]
    doc["summary"] = {"code": c.summary.code, "message": summary_text(c.summary)}
    doc["candidateNodes"] = list(c.candidates)
    return doc


def _suggestion_view(s) -> dict[str, Any]:
    return {**change_view(s, WHY_PENDING, suggestion_text(s)), "nodes": list(s.nodes)}


def _pod_view(r: P.PendingReport) -> dict[str, Any]:
    live = r.live
    ans = answer(r)
    return {
        "namespace": r.pod.namespace, "name": r.pod.name,
        "message": r.message,
        "schedulerMessage": None if live is None else live.text,
        "messagesAgree": r.agree,
        "schedulable": r.schedulable,
        "nodes": [_node_view(v) for v in r.verdicts],
        "constraints": [_constraint_entry(c) for c in r.constraints],
        "suggestions": [_suggestion_view(s) for s in r.suggestions],
        "messagesMatchExactly": None if live is None else r.exact,
        "schedulerMessageSource": None if live is None else live.source,
        "schedulerMessageTime": None if live is None or not live.time else live.time,
        "mismatchCauses": [{"code": c, "message": cause_text(c, r)} for c in r.causes],
        "fitNodes": list(r.fit_nodes),
        "triedActions": list(r.tried),
        "blockedBy": [{"plugin": b.plugin, "reason": b.reason, "nodes": list(b.nodes), "code": b.code,
                       "refusesEveryNode": b.alone, "message": blocker_text(b),
                       "details": camel_keys(b.params)} for b in r.blockers],
        "answer": None if ans is None else {"code": ans[0], "message": ans[1]},
    }


def pending_view(reports: P.PendingReports, missing: Sequence[str] = ()) -> dict[str, Any]:
    """The PendingReport document. Its pods are a Stream: `structured.pieces` makes each pod's
    view as it is written (so memory holds one pod's view and text at a time, not a whole
    -A report's), `structured.dump` makes them a list."""
    return {
        "apiVersion": API_VERSION, "kind": "PendingReport",
        # the Kubernetes minor whose scheduler the rebuilt messages follow (--kube-version, /version)
        "schedulerVersion": reports.scheduler_version,
        "pods": Stream(lambda: map(_pod_view, reports.reports)),
        "groups": [{"namespace": g[0].pod.namespace,
                    "owner": None if g[0].pod.owner is None else {"kind": g[0].pod.owner.kind,
                                                                  "name": g[0].pod.owner.name},
                    "count": len(g), "pods": [r.pod.name for r in g]} for g in reports.groups()],
        "notPending": [{"namespace": n.pod.namespace, "name": n.pod.name, "phase": n.pod.phase,
                        "node": n.pod.node_name or None, "message": not_pending_text(n)}
                       for n in reports.not_pending],
        "warnings": warnings_view(missing),
    }


# -- human report ----------------------------------------------------------------------------

def _styled(text: str, style: str | None = None):
    from rich.text import Text

    return Text(text, style=style or "")


def reports_text(reports: P.PendingReports, wide: bool = False, no_headers: bool = False,
                 fit: int | None = None, color: bool = False, width: int | None = None) -> str:
    """One block per group of pods of one owner with the same answer (its count and the other
    pods' names under the first pod's line); a one-liner per pod that is not pending. `fit`: the
    width the domain tables wrap to (cli/terminal.fit_width). `color`, `width`: see
    render.console.Page."""
    page = Page(color, width)
    w = page.add
    for item in reports.not_pending:
        w(not_pending_text(item) + "\n")
    for i, group in enumerate(reports.groups()):
        if i or reports.not_pending:
            w("\n")
        _report(page, group[0], wide, no_headers, others=group[1:], fit=fit)
    return page.text()


def report_text(r: P.PendingReport, wide: bool = False, no_headers: bool = False,
                fit: int | None = None, color: bool = False, width: int | None = None) -> str:
    """One pod's answer, as reports_text writes it for a pod alone."""
    page = Page(color, width)
    _report(page, r, wide, no_headers, fit=fit)
    return page.text()


def _report(page: Page, r: P.PendingReport, wide: bool = False, no_headers: bool = False,
            others: Sequence[P.PendingReport] = (), fit: int | None = None) -> None:
    w = page.add
    total = len(r.verdicts)
    verdict = (_styled(f"fits {len(r.fit_nodes)} of {total} nodes", "green") if r.schedulable
               else _styled(f"fits none of {total} nodes", "bold red"))
    page.line(f"Pod {r.pod.namespace}/{r.pod.name} · {r.pod.phase} · ", verdict)
    if others:
        owner = r.pod.owner
        w(f"Same answer for {len(others)} more pod{'s' if len(others) != 1 else ''} of {owner.kind}/{owner.name} "
          f"({len(others) + 1} in all): {_some([o.pod.name for o in others], 5)}\n")
    if r.schedulable:
        w(f"It can run on {_names(list(r.fit_nodes)[:5])}"
          f"{' and more' if len(r.fit_nodes) > 5 else ''}: the scheduler has not placed it yet, "
          f"nothing refuses it.\n")
    else:
        ans = answer(r)
        if ans is not None:
            page.line(_styled("Answer: ", "bold"), ans[1])
        if len(r.blockers) > 1:
            w("Blocked by: " + "; ".join(f"{b.plugin} ({b.reason}) on {_n_nodes(len(b.nodes))}"
                                         for b in r.blockers) + "\n")
        w(f"Scheduler message (rebuilt): {r.message}\n")
    _live(page, r)
    for c in r.constraints:
        w("\n")
        _constraint(page, c, no_headers, fit)
    if wide:
        w("\n")
        _nodes(page, r, no_headers)
    if not r.schedulable:
        w("\n")
        _fixes(page, r)


def _live(page: Page, r: P.PendingReport) -> None:
    w = page.add
    live = r.live
    if live is None:
        w("Live message: none in the snapshot (no PodScheduled condition, no FailedScheduling event).\n")
        return
    origin = "PodScheduled condition" if live.source == "condition" else "FailedScheduling event"
    when = f", {live.time}" if live.time else ""
    if r.agree and r.exact:
        w(f"Live message ({origin}{when}): identical.\n")
        return
    if r.agree:
        w(f"Live message ({origin}{when}): same verdicts, worded for another release:\n  {live.text}\n")
        return
    page.line(_styled(f"Live message ({origin}{when}) differs:", "yellow"))
    w(f"  {live.text}\n")
    for code in r.causes:
        w(f"  likely cause: {cause_text(code, r)}\n")


def _constraint(page: Page, c: P.ConstraintExplanation, no_headers: bool, fit: int | None = None) -> None:
    from kubectl_tspread.render.reasons import constraint_title

    w = page.add
    w("Spread " + constraint_title(c.state) + "\n")
    headers = ["DOMAIN", "PODS", "NODES", "SKEW-IF-PLACED", "ALLOWED", "FIT-NODES", "OTHER-FILTERS"]
    rows = []
    for d in c.domains:
        other = ", ".join(f"{n} {reason}" for reason, n in d.blockers) or "-"
        rows.append([d.value, str(d.pods), str(len(d.nodes)), str(d.skew_if_placed),
                     _styled("yes", "green") if d.allowed else _styled("no", "red"),
                     str(len(d.fit_nodes)), other])
    if rows:
        page.table(table(headers, rows, no_headers, fit=fit, shrink=(6, 0)))
    else:
        w("  no domains: no node passes this constraint's node rules\n")
    page.line(_styled("→ ", "bold"), summary_text(c.summary))
    for t in c.traps:
        page.line(_styled(f"  trap {t.code}: ", "bold yellow"), trap_text(t))


def _nodes(page: Page, r: P.PendingReport, no_headers: bool) -> None:
    rows = []
    for v in r.verdicts:
        first = v.first
        rest = [f"{f.plugin}: {f.reason}" for f in v.failures if f != first]
        rows.append([v.node, _styled(v.status, "green" if v.passes else "red"),
                     "-" if first is None else f"{first.plugin}: {first.reason}",
                     "; ".join(rest) or "-"])
    page.table(table(["NODE", "STATUS", "FIRST-FAILURE", "ALSO-FAILS"], rows, no_headers))


def _fixes(page: Page, r: P.PendingReport) -> None:
    w = page.add
    if not r.suggestions:
        tried = ", ".join(r.tried) or "none applied to this pod"
        page.line(_styled("No candidate fix makes this pod schedulable", "bold red"), f" (tried: {tried}).")
        return
    w("Fixes (each applied to a copy of the snapshot and re-run through every filter; no change to "
      "running pods first, then template edits, then destructive ones):\n")
    for i, s in enumerate(r.suggestions, start=1):
        fits = _names(list(s.nodes)[:3]) + (" and more" if len(s.nodes) > 3 else "")
        page.line(f"  {i}. ", suggestion_text(s), _styled(f" → fits on {fits}", "green"),
                  _styled(" [verified: the pod then fits]", "dim"))
        for e in s.side_effects:
            style = "bold red" if e.destructive else "yellow"
            page.line("     ", _styled("side effect: ", style), side_effect_text(e))
