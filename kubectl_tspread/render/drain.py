"""Output of `drain-safe`: the step table, the verdict, findings, and the DrainPlan view-model."""

from __future__ import annotations

from typing import Any, Sequence

from kubectl_tspread.views.drain.findings import already_violated, cause_of
from kubectl_tspread.views.drain.pods import refusal_head
from kubectl_tspread.render import structured
from kubectl_tspread.render.console import Page, table
from kubectl_tspread.render.drain_remedies import names_text, remedy_tag, remedy_text, remedy_view
from kubectl_tspread.render.structured import API_VERSION
from kubectl_tspread.render.table import SUMMARY_DOMAINS, format_counts
from kubectl_tspread.render.text import side_effect_text


def _short(key: str) -> str:
    return key.rsplit("/", 1)[-1]


def _dist(d) -> str:
    return " ".join(f"{k}={v}" for k, v in d.items()) or "<no domains>"


# --- sentences -------------------------------------------------------------------------

def finding_label(f) -> str:
    """The name a finding is shown under: its cause (NoCapacity only for resources)."""
    return cause_of(f.code, f.params)


_CAUSE_WORDS = {"VolumeZoneConflict": "their volumes pin them to nodes that cannot take them",
                "VolumeBinding": "their volume claims bind on no node that can take them",
                "PodAntiAffinity": "pod anti-affinity keeps them off every node that would take them",
                "PodAffinity": "no node that would take them holds the pods their affinity requires",
                "NodeAffinity": "no node that matches their node affinity/selector can take them",
                "UntoleratedTaint": "every node that could take them has a taint they do not tolerate",
                "HostPortConflict": "their host ports are taken on every node that could take them",
                "NodeName": "they name a node that cannot take them",
                "NodesCordoned": "every node that could take them is cordoned"}


def finding_message(f) -> str:
    """One sentence per finding code, from its data."""
    p = f.params
    pods = ", ".join(f.pods[:5]) + (f" and {len(f.pods) - 5} more" if len(f.pods) > 5 else "")
    who = f"{f.workload}: " if f.workload else ""
    at = f" at step {f.step}" if f.step else ""
    if f.code == "CordonedDomainTrap":
        doms = ", ".join(p.get("cordonedDomains", ()))
        return (f"{who}{_short(p.get('topologyKey', ''))} {doms} has only cordoned nodes yet stays a domain "
                f"(nodeTaintsPolicy Ignore) holding the global minimum at {p.get('globalMin')}; with maxSkew "
                f"{p.get('maxSkew')} the other domains refuse the replacements of {pods}{at} "
                f"({_dist(p.get('distribution', {}))}).")
    if f.code == "HostnameSpreadFull":
        held = p.get("minimumHeldBy") or ()
        by = ""
        if held:
            more = p.get("minimumHeldByCount", len(held)) - len(held)
            by = (f" The global minimum is held at {p.get('globalMin')} by "
                  + ", ".join(f"{h['node']} ({h['why']})" for h in held) + (f" and {more} more" if more > 0 else "")
                  + ".")
        return (f"{who}every node that fits already holds globalMin + maxSkew {p.get('maxSkew')} pods under the "
                f"kubernetes.io/hostname constraint; the replacements of {pods} find no node{at}.{by}")
    if f.code == "NoCapacity":
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(p.get("reasons", {}).items()))
        cause = _CAUSE_WORDS.get(finding_label(f))
        if cause:
            return f"{who}no node takes the replacements of {pods}{at}: {cause} ({reasons})."
        return f"{who}no node has room for the replacements of {pods}{at} ({reasons})."
    if f.code == "SpreadBlocked":
        return (f"{who}spread ({_short(p.get('topologyKey', ''))}, maxSkew {p.get('maxSkew')}) refuses every "
                f"node that fits the replacements of {pods}{at} ({_dist(p.get('distribution', {}))}).")
    if f.code == "SkewExceeded":
        return (f"{who}{_short(p.get('topologyKey', ''))} skew reaches {p.get('skew')} (limit {p.get('limit')}) "
                f"after step {f.step} ({_dist(p.get('distribution', {}))}).")
    if f.code == "PdbBlocks" and p.get("budgetLost"):
        return (f"{who}PodDisruptionBudget {', '.join(p.get('pdbs', ()))} is used up by replacements that never "
                f"become Ready: {pods} cannot be evicted{at}.")
    if f.code == "PdbBlocks":
        why = "".join(_budget_why(b) for b in p.get("budgets", ()))
        return (f"{who}PodDisruptionBudget {', '.join(p.get('pdbs', ()))} allows no disruption{why}: "
                f"{pods} cannot be evicted.")
    if f.code == "MultiplePdbs":
        return (f"{who}{pods} is covered by several PodDisruptionBudgets ({', '.join(p.get('pdbs', ()))}); "
                f"the Eviction API refuses such pods with a 500.")
    if f.code in ("UnmanagedPod", "LocalStorage", "DaemonSetPod"):
        return f"kubectl drain refuses: {refusal_head(str(p.get('message', '')))}: {pods}."
    if f.code == "OrderMatters":
        return (f"draining in the given order ({', '.join(p.get('givenOrder', ()))}) is not safe; "
                f"this plan's order is.")
    return f"{who}{f.code} {pods}"


_PDB_CODES = ("PdbBlocks", "MultiplePdbs")


def _budget_why(b: dict) -> str:
    """Why one budget is at 0 (views/drain/pdb.budget_state), as a parenthesis; "" when its
    status does not tell."""
    if b.get("specAllowsNone"):
        return " (its spec allows none)"
    needed = b.get("healthyNeeded")
    if needed:
        return (f" now ({b.get('currentHealthy')} of its {b.get('expectedPods')} pods healthy, "
                f"{b.get('desiredHealthy')} required: it allows one once {needed} more "
                f"{'is' if needed == 1 else 'are'} healthy)")
    return ""


def verdict_line(plan, missing_kinds: Sequence[str] | None = None) -> str:
    """The verdict sentence. `missing_kinds` (default: the plan's, from the MissingKinds check
    of the snapshot) are kinds the input lacked: a SAFE verdict then says what it did not check.
    Namespaces are never read (their warning says why), so no verdict names them."""
    n = len(plan.steps)
    lacked = [k for k in (plan.missing_kinds if missing_kinds is None else missing_kinds) if k != "Namespace"]
    if plan.safe:
        caveat = f" ({', '.join(_plural(k) for k in lacked)} not checked: none in the input)" if lacked else ""
        line = (f"SAFE{caveat}: {n} step(s) drain {', '.join(plan.nodes)}; no DoNotSchedule constraint goes past "
                f"maxSkew or gets worse than before the drain, and every replacement has a node")
        worse = already_violated(plan)
        if worse:
            line += "; " + "; ".join(
                f"{v['workload']} was already VIOLATED ({_short(v['topologyKey'])} maxSkew {v['maxSkew']}), "
                f"skew {v['skewBefore']} → {v['skewAfter']}" for v in worse)
        return line + "."
    # PDB-blocked pods keep running: counted apart from the replacements left without a node
    blocked = [s for s in plan.stranded if s.reason in _PDB_CODES]
    stranded = [s for s in plan.stranded if s.reason not in _PDB_CODES]
    parts = []
    for group, what in ((stranded, "would be stranded"),
                        (blocked, "cannot be evicted (PodDisruptionBudget; they keep running)")):
        if group:
            workloads = sorted({s.workload or f"{s.namespace}/{s.name}" for s in group})
            parts.append(f"{len(group)} pod(s) of {', '.join(workloads)} {what}")
    why = "; ".join(parts) or "the drain breaks a constraint or kubectl refuses pods"
    return f"UNSAFE: no safe order found: {why}."


# --- table -----------------------------------------------------------------------------

def plan_text(plan, wide: bool = False, no_headers: bool = False, fit: int | None = None,
              color: bool = False) -> str:
    return plan_body_text(plan, wide, no_headers, fit, color) + plan_findings_text(plan)


def plan_body_text(plan, wide: bool = False, no_headers: bool = False, fit: int | None = None,
                   color: bool = False) -> str:
    """The table output of a drain plan up to its findings: the verdict first, a summary per
    workload, then the details (the steps, the constraints after each, the pods left in place,
    the stranded pods). It never reads the findings' remedies: drain-safe renders it while
    they are verified (the findings' codes, which the summary shows, are known by then).

    `fit`: the width the tables fit (cli/terminal.fit_width; None: unbounded, -o wide).
    Only the cells of space-separated lists wrap (FINDINGS, DISTRIBUTION): pod and workload
    names, and the steps' accepting domains, are never cut. `color`: the verdict, statuses and
    constraint rows colored."""
    page = Page(color)
    _verdict(page, plan)
    summary = _summary_rows(plan, wide)
    if summary:
        page.add("\n")
        page.table(table(["WORKLOAD", "EVICTED", "STRANDED", "NOT-EVICTABLE", "FINDINGS"], summary,
                         no_headers, fit=fit, shrink=(4,)))
        hidden = _summary_hidden(plan, wide)
        if hidden:
            page.add(f"… and {hidden} more workload(s) with evictions only (-o wide lists every one)\n")
    page.add("\n")
    if plan.already_cordoned or plan.already_evicted:
        page.add(f"Already cordoned: {', '.join(plan.already_cordoned) or '-'}; "
                 f"already evicted: {', '.join(plan.already_evicted) or '-'}.\n")
    for e in plan.settled:
        page.add(f"pending before the drain: {e.namespace}/{e.name} -> {e.predicted_node or '<no node fits>'}\n")
    for line in _cordon_lines(plan, wide):
        page.add(line + "\n")
    rows = []  # of tuples, as table() keeps them (see Rows)
    for s in plan.steps:
        first = True
        for e in s.evictions or [None]:
            lead = (str(s.number), ",".join(s.nodes)) if first else ("", "")
            first = False
            if e is None:
                rows.append(lead + ("-", "-", "-", "-"))
                continue
            to = e.predicted_node or ("<stranded>" if e.replaced else "<deleted, not replaced>")
            accepts = " ".join(f"{_short(k)}:{_domains(e.accepting_domains, k, wide)}" for k in e.accepting_domains)
            rows.append(lead + (f"{e.namespace}/{e.name}", e.workload or "-", to, accepts or "-"))
    if rows:
        # no cell here wraps: names, and ACCEPTING's comma-joined domains, are kept whole
        page.table(table(["STEP", "NODES", "EVICT", "WORKLOAD", "TO", "ACCEPTING"], rows, no_headers))
    else:
        page.add("Nothing to drain.\n")
    crow = _constraint_rows(plan, wide, color)
    if crow:
        page.add("\nConstraints after each step:\n")
        page.table(table(["STEP", "WORKLOAD", "CONSTRAINT", "DISTRIBUTION", "SKEW", "STATUS"], crow,
                         no_headers, fit=fit, shrink=(3,)))
    _skips_and_pdbs(page, plan, wide)
    for s in plan.stranded:
        what = "not evictable" if s.reason in _PDB_CODES else "stranded"
        page.add(f"{what}: {s.namespace}/{s.name} ({s.workload or 'no controller'}) at step {s.step}: "
                 f"{cause_of(s.reason, s.details)}\n")
    return page.text()


# a whole zone cordons 1,700 nodes at step 1: the line names this many unless -o wide
CORDON_NAMES = 6


def _cordon_lines(plan, wide: bool) -> list[str]:
    """When each node is cordoned, worded as kubectl drain prints it (`node/a1 cordoned`): step 1
    cordons every target before its first eviction; with --stage-cordons, each step its own."""
    out = []
    for s in plan.steps:
        if not s.cordon:
            continue
        names = [f"node/{n}" for n in s.cordon]
        shown = names if wide or len(names) <= CORDON_NAMES else names[:CORDON_NAMES]
        more = f" and {len(names) - len(shown)} more (-o wide lists every one)" if len(shown) < len(names) else ""
        when = "just before its evictions" if plan.stage_cordons else "before any eviction"
        out.append(f"step {s.number}: {', '.join(shown)}{more} cordoned {when}")
    return out


def _plural(kind: str) -> str:
    return kind if kind.endswith("s") else f"{kind}s"


def _verdict(page: Page, plan) -> None:
    """The verdict line, green when SAFE and red when not when colored; never wrapped."""
    line = verdict_line(plan)
    if not page.color:
        page.add(line + "\n")
        return
    from rich.text import Text

    word = "SAFE" if plan.safe else "UNSAFE"
    page.line(Text(word, style="bold green" if plan.safe else "bold red"), line[len(word):], soft_wrap=True)


# the summary lists every workload with stranded or PDB-blocked pods or a finding, and up to this
# many more with evictions only (a zone's drain moves hundreds of workloads); -o wide lists all
SUMMARY_QUIET_ROWS = 8


def _summary(plan):
    """workload -> [evicted, stranded, not evictable, finding labels], worst first."""
    rows: dict[str, list] = {}

    def row(name: str) -> list:
        got = rows.get(name)
        if got is None:
            got = rows[name] = [0, 0, 0, []]
        return got

    for s in plan.steps:
        for e in s.evictions:
            row(e.workload or f"{e.namespace}/{e.name}")[0] += 1
    for s in plan.stranded:
        row(s.workload or f"{s.namespace}/{s.name}")[2 if s.reason in _PDB_CODES else 1] += 1
    for f in plan.findings:
        if f.workload and f.severity == "error":
            labels = row(f.workload)[3]
            if finding_label(f) not in labels:
                labels.append(finding_label(f))
    return sorted(rows.items(), key=lambda kv: (-kv[1][1] - kv[1][2], -len(kv[1][3]), -kv[1][0], kv[0]))


def _summary_rows(plan, wide: bool) -> list[tuple[str, ...]]:
    out, quiet = [], 0
    for name, (evicted, stranded, blocked, labels) in _summary(plan):
        if not (stranded or blocked or labels):
            quiet += 1
            if not wide and quiet > SUMMARY_QUIET_ROWS:
                continue
        out.append((name, str(evicted), str(stranded), str(blocked), ", ".join(labels) or "-"))
    return out


def _summary_hidden(plan, wide: bool) -> int:
    if wide:
        return 0
    quiet = sum(1 for _, (e, st, b, labels) in _summary(plan) if not (st or b or labels))
    return max(0, quiet - SUMMARY_QUIET_ROWS)


STATUS_STYLE = {"OK": "green", "AT LIMIT": "yellow", "VIOLATED": "red", "DRIFTED": "magenta", "OVER LIMIT": "bold red"}


def _constraint_rows(plan, wide: bool, color: bool = False) -> list[tuple]:
    """The rows of "Constraints after each step". A constraint no pod of its workload moved
    since an earlier step is that step's very object (steps._judged): its cells are made
    once, not at each of the hundreds of steps that show it."""
    rows, cells = [], {}  # id(constraint) -> its row's cells after STEP (the plan keeps it alive)
    for s in plan.steps:
        moved, number = {e.workload for e in s.evictions}, (str(s.number),)
        for c in s.constraints_after:
            # by default a step shows the DoNotSchedule constraints of the workloads it moves,
            # and any constraint over its limit (a big drain tracks hundreds per step)
            if not wide and (c.when_unsatisfiable != "DoNotSchedule" or (c.workload not in moved and not c.exceeded)):
                continue
            tail = cells.get(id(c))
            if tail is None:
                status = "OVER LIMIT" if c.exceeded else c.status
                if color:
                    from rich.text import Text
                    status = Text(status, style=STATUS_STYLE.get(status, ""))
                tail = cells[id(c)] = (c.workload, f"{_short(c.topology_key)} maxSkew={c.max_skew}",
                                       format_counts(c.distribution, full=wide), str(c.skew), status)
            rows.append(number + tail)
    return rows


def _domains(accepting, key: str, wide: bool) -> str:
    """A key's accepting domains: listed, or counted past SUMMARY_DOMAINS (a hostname key
    accepts hundreds of nodes) unless -o wide."""
    if not wide:
        count = getattr(accepting, "domain_count", None)  # drain/vector.Accepting counts without naming
        domains = count(key) if count is not None else len(accepting[key])
        if domains > SUMMARY_DOMAINS:
            return f"{domains} domains"
    return ",".join(accepting[key]) or "-"


def _skips_and_pdbs(page: Page, plan, wide: bool) -> None:
    for s in plan.steps:
        # with --ignore-daemonsets a DaemonSet pod on every drained node is expected: one line a step
        left = [k for k in s.skipped if k.reason == "DaemonSetPod"] if plan.flags.ignore_daemonsets else []
        if left:
            names = [f"{k.namespace}/{k.name}" for k in left]
            page.add(f"step {s.number}: {len(left)} DaemonSet pod(s) left in place (--ignore-daemonsets): "
                     f"{', '.join(names) if wide else names_text(names, 3)}\n")
        for k in s.skipped:
            if left and k.reason == "DaemonSetPod":
                continue
            page.add(f"step {s.number}: not evicted {k.namespace}/{k.name} ({k.reason})\n")
        if wide:
            for b in s.pdbs:
                page.add(f"step {s.number}: PDB {b.namespace}/{b.name} {b.evictions}/{b.disruptions_allowed} "
                         f"disruptions\n")
        if s.deleted_nodes:
            page.add(f"step {s.number}: delete node(s) {', '.join(s.deleted_nodes)}\n")
    for e in plan.kubectl_errors:
        page.add(f"kubectl drain would fail: {e}\n")


def plan_findings_text(plan) -> str:
    """The rest of plan_text after plan_body_text: the findings with their remedies."""
    page = Page()
    if plan.findings:
        page.add("\nFindings:\n")
    for f in plan.findings:
        page.add(f"{finding_label(f)}: {finding_message(f)}\n")
        for r in f.remedies:
            page.add(f"  fix ({remedy_tag(r)}): {remedy_text(r)}\n")
            for e in r.side_effects:
                page.add(f"    side effect: {side_effect_text(e)}\n")
        for r in f.unchecked:
            page.add(f"  not checked (the re-plan allowance was spent): {remedy_text(r)}\n")
        if not f.remedies and f.severity == "error":
            page.add("  no remedy the simulation confirms\n" if not f.unchecked else
                     "  no candidate was checked: none can be offered as a fix yet\n" if not f.failed else
                      f"  none of the {f.failed} candidate(s) checked clears it\n")
    return page.text()


# --- JSON / YAML -----------------------------------------------------------------------

def _eviction_view(e) -> dict[str, Any]:
    return {"namespace": e.namespace, "name": e.name, "workload": e.workload, "predictedNode": e.predicted_node,
            "acceptingDomains": {k: list(v) for k, v in e.accepting_domains.items()},
            "node": e.node or None, "replaced": e.replaced, "pdbs": list(e.pdbs), "warning": e.warning or None,
            # the scheduler picks one of several equally scored nodes at random: [] when there is one
            "tiedNodes": list(e.tied_nodes)}


def _step_view(s) -> dict[str, Any]:
    return {
        "step": s.number, "nodes": list(s.nodes),
        "evictions": [_eviction_view(e) for e in s.evictions],
        "skipped": [{"namespace": k.namespace, "name": k.name, "reason": k.reason, "node": k.node,
                     "message": k.message or None} for k in s.skipped],
        "constraintsAfter": [{"workload": c.workload, "namespace": c.namespace, "topologyKey": c.topology_key,
                              "maxSkew": c.max_skew, "whenUnsatisfiable": c.when_unsatisfiable,
                              "distribution": dict(c.distribution), "globalMin": c.global_min, "skew": c.skew,
                              "limit": c.limit, "status": "OVER LIMIT" if c.exceeded else c.status}
                             for c in s.constraints_after],
        "pdbs": [{"namespace": b.namespace, "name": b.name, "disruptionsAllowed": b.disruptions_allowed,
                  "evictions": b.evictions} for b in s.pdbs],
        "cordon": list(s.cordon), "deleteNodes": list(s.deleted_nodes), "safe": s.safe,
    }


def drain_plan_view(plan) -> dict[str, Any]:
    """The DrainPlan document of the issue's contract (plus additive extras). Its steps are a
    structured.Stream: structured.pieces makes each step's view as it is written, and
    structured.dump makes them a list."""
    return {
        "apiVersion": API_VERSION, "kind": "DrainPlan",
        "nodes": list(plan.nodes), "safe": plan.safe,
        "steps": structured.Stream(lambda: map(_step_view, plan.steps)),
        "stranded": [{"namespace": s.namespace, "name": s.name, "workload": s.workload, "step": s.step,
                      "reason": s.reason, "cause": cause_of(s.reason, s.details), "details": dict(s.details)}
                     for s in plan.stranded],
        "findings": [{"code": f.code, "cause": finding_label(f), "severity": f.severity, "message": finding_message(f),
                      "workload": f.workload, "pods": list(f.pods), "step": f.step, "details": dict(f.params),
                      "remedies": [remedy_view(r) for r in f.remedies],
                      "uncheckedRemedies": [remedy_view(r) for r in f.unchecked], "candidatesFailed": f.failed}
                     for f in plan.findings],
        "verdict": verdict_line(plan),
        "warnings": structured.warnings_view(plan.missing_kinds),
        "strandedCount": sum(s.reason not in _PDB_CODES for s in plan.stranded),
        "pdbBlockedCount": sum(s.reason in _PDB_CODES for s in plan.stranded),
        "alreadyViolated": already_violated(plan),
        "summary": [{"workload": name, "evicted": e, "stranded": st, "notEvictable": b, "findings": list(labels)}
                    for name, (e, st, b, labels) in _summary(plan)],
        "maxParallel": plan.max_parallel,
        "kubectlErrors": list(plan.kubectl_errors), "kubectlWarnings": list(plan.kubectl_warnings),
        "alreadyCordoned": list(plan.already_cordoned), "alreadyEvicted": list(plan.already_evicted),
        # step 1 cordons every target before any eviction unless --stage-cordons (steps[].cordon)
        "cordonFirst": not plan.stage_cordons,
        "cordonedAtStep": {n: s.number for s in plan.steps for n in s.cordon},
        "evictedAgain": plan.evicted_again,
        "settled": [_eviction_view(e) for e in plan.settled],
        "explored": plan.explored, "searchExhausted": plan.search_exhausted,
    }
