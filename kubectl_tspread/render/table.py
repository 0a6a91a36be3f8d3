"""Human output of `distribution`: the summary table and the per-workload detail."""

from __future__ import annotations

from kubectl_tspread.render.console import Page, block_text, table
from kubectl_tspread.render.reasons import constraint_title, excluded_node_text, uncounted_text
from kubectl_tspread.render.text import TIMELINE_NOTE, replay_gap_text, trap_message

STATUS_STYLE = {"OK": "green", "AT LIMIT": "yellow", "VIOLATED": "bold red", "DRIFTED": "magenta",
                "NO DOMAINS": "bold red"}
BAR_WIDTH = 30


def _styled(text: str, style: str | None):
    from rich.text import Text

    return Text(text, style=style or "")


def bar(count: int, largest: int) -> str:
    """One block per pod up to BAR_WIDTH, scaled beyond; a non-zero count always shows a block."""
    if count <= 0 or largest <= 0:
        return ""
    if largest <= BAR_WIDTH:
        return "█" * count
    return "█" * max(1, round(count * BAR_WIDTH / largest))


SUMMARY_DOMAINS = 6


def format_counts(counts, full: bool = False) -> str:
    """{domain: pods} in sorted domain order as `us-east-2a=7 us-east-2b=7 us-east-2c=6`; past
    SUMMARY_DOMAINS domains (hostname spreads) `11 domains, min 0, max 1` unless `full` (-o wide)."""
    domains = len(counts)  # once: a drain plan formats 100,000 of them
    if not domains:
        return "<no domains>"
    if domains > SUMMARY_DOMAINS and not full:
        extremes = getattr(counts, "extremes", None)  # drain's DomainCounts knows them without a walk
        if extremes is not None:
            return _summary_line(domains, *extremes())
        return _summary(list(counts.values()))
    return " ".join(f"{k}={counts[k]}" for k in sorted(counts))


def _summary(pods: list[int]) -> str:
    return _summary_line(len(pods), min(pods), max(pods))


def _summary_line(domains: int, low: int, high: int) -> str:
    return f"{domains} domains, min {low}, max {high}"


def distribution_string(cs, full: bool = False) -> str:
    domains = cs.domains
    if len(domains) > SUMMARY_DOMAINS and not full:
        # format_counts' summary, without a dict of thousands of hostname domains per row
        return _summary([d.pods for d in domains.values()])
    return format_counts({d.value: d.pods for d in domains.values()}, full)


def marked_distribution(c, full: bool = False) -> str:
    """The summary's DISTRIBUTION cell: counts with the domains that accept nothing now marked
    (`us-east-2c=0(cordoned)`); past SUMMARY_DOMAINS domains, how many are cordoned or tainted."""
    cs = c.state
    if not cs.domains:
        return "<no domains>"
    if len(cs.domains) > SUMMARY_DOMAINS and not full:
        text = distribution_string(cs)
        states = [a.state for a in c.acceptance.values()]
        for state in ("cordoned", "tainted"):
            if states.count(state):
                text += f", {states.count(state)} {state}"
        return text
    return " ".join(f"{d.value}={d.pods}" + (f"({c.acceptance[d.value].state})" if d.value in c.acceptance else "")
                    for d in sorted(cs.domains.values(), key=lambda d: d.value))


def summary_rows(report):
    """One row per workload × constraint, worst first (VIOLATED, NO DOMAINS, DRIFTED, AT LIMIT,
    OK; DoNotSchedule before ScheduleAnyway; larger excess first)."""
    rows = []
    for w in report.workloads:
        for c in w.constraints:
            rank = c.rank + (w.namespace, w.kind, w.name)
            rows.append((rank, w, c))
    rows.sort(key=lambda r: r[0])
    return [(w, c) for _, w, c in rows]


def summary_text(report, wide: bool = False, no_headers: bool = False, fit: int | None = None,
                 color: bool = False) -> str:
    """The summary table, colored when `color`. `fit`: the width to fit (cli/terminal.fit_width);
    CONSTRAINT, DISTRIBUTION and WORKLOAD wrap onto more lines to stay within it. -o wide passes
    None: everything, unbounded."""
    headers = ["NAMESPACE", "WORKLOAD", "PODS", "PENDING", "CONSTRAINT", "DISTRIBUTION", "SKEW", "STATUS"]
    if wide:
        headers += ["GLOBALMIN", "MINDOMAINS", "POLICIES", "SELECTOR"]
    rows = []
    for w, c in summary_rows(report):
        cs, k = c.state, c.constraint
        mode = k.when_unsatisfiable + (" (implicit)" if k.implicit else "")
        key = k.topology_key if wide else _short(k.topology_key)  # the full key: -o wide, JSON
        row = [w.namespace, f"{w.kind.lower()}/{w.name}", str(w.pods),
               _styled(str(w.pending), "bold red" if w.pending else None),
               f"{key} maxSkew={k.max_skew} {mode}", marked_distribution(c, full=wide), str(cs.skew),
               _styled(c.status, STATUS_STYLE.get(c.status))]
        if wide:
            row += [str(cs.global_min), str(k.min_domains),
                    f"affinity={k.node_affinity_policy},taints={k.node_taints_policy}", str(cs.selector)]
        rows.append(row)
    if not rows:
        ns = "all namespaces" if report.namespace is None else f'namespace "{report.namespace}"'
        return f"No workloads with topology spread constraints found in {ns}.\n"
    return block_text(table(headers, rows, no_headers, fit=fit, shrink=(4, 5, 1)), color)


def detail_text(report, wide: bool = False, no_headers: bool = False, fit: int | None = None,
                color: bool = False, width: int | None = None) -> str:
    """Each workload's constraints: a table of domains, the verdict, what was left out, the
    traps; and its timeline when computed. `color`, `width`: see render.console.Page."""
    page = Page(color, width)
    first = True
    for w in report.workloads:
        if not first:
            page.add("\n")
        first = False
        sets = f" · constraint set {w.constraint_set} of {w.constraint_sets}" if w.constraint_sets > 1 else ""
        pending = f" ({w.pending} pending)" if w.pending else ""
        page.add(f"{w.kind} {w.namespace}/{w.name} · {w.pods} pods{pending}{sets} · "
                 f"counted for incoming pod {w.incoming.name}\n")
        for c in w.constraints:
            page.add("\n")
            _constraint(page, c, wide, no_headers)
        if w.timeline is not None:
            page.add("\n")
            _timeline(page, w, no_headers, fit)
    return page.text()


def _constraint(page: Page, c, wide: bool, no_headers: bool) -> None:
    cs = c.state
    page.add(constraint_title(cs) + "\n")
    largest = max((d.pods for d in cs.domains.values()), default=0)
    headers = ["DOMAIN", "PODS", "NODES", "HEADROOM", ""]
    if wide:
        headers = ["DOMAIN", "PODS", "NODES", "HEADROOM", "SKEW-IF-PLACED", "NODE-NAMES", ""]
    rows = []
    for d in cs.domains.values():
        row = [d.value, str(d.pods), str(len(d.nodes)), _headroom_cell(c, d.value)]
        if wide:
            row += [str(cs.skew_if_placed(d.value)), ",".join(d.nodes)]
        row.append(_styled(bar(d.pods, largest), "cyan"))
        rows.append(row)
    if rows:
        page.table(table(headers, rows, no_headers))
    else:
        page.add("  no domains: no node passes this constraint's node rules\n")
    status = _styled(c.status, STATUS_STYLE.get(c.status))
    page.line(_verdict_line(cs), status)
    for e in cs.excluded_nodes:
        page.add(f"  excluded node {e.name}: {excluded_node_text(e, cs.constraint)}\n")
    for u in c.uncounted:
        page.add(f"  not counted: pod {u.name}: {uncounted_text(u)}\n")
    for t in c.traps:
        page.line(_styled(f"  trap {t.code}: ", "bold yellow"), trap_message(t))


def _headroom_cell(c, value: str) -> str:
    """What the domain accepts now; when cordons or taints keep that below spread's headroom,
    why, and what spread alone would allow."""
    a = c.accepts_now(value)
    spread_allows = c.state.headroom(value)
    if a.state is None:
        return str(a.accepts_now)
    return f"{a.accepts_now} ({a.state}; spread allows {spread_allows})"


def _verdict_line(cs) -> str:
    k = cs.constraint
    if not cs.domains:
        why = " (no domains)"
    elif cs.min_forced_zero:
        why = f" (forced to 0: {len(cs.domains)} domains, fewer than minDomains {k.min_domains})"
    else:
        why = ""
    return f"global minimum {cs.global_min}{why} · skew {cs.skew} · maxSkew {k.max_skew} · "


def _timeline(page: Page, w, no_headers: bool = False, fit: int | None = None) -> None:
    keys = list(dict.fromkeys(c.constraint.topology_key for c in w.constraints))
    headers = ["#", "CREATED", "POD", "NODE"] + [f"DOMAIN({_short(k)})" for k in keys] \
        + [f"COUNTS({_short(k)})" for k in keys] + [f"SKEW({_short(k)})" for k in keys] + ["NOTE"]
    rows = []
    notes: list[tuple[int, str]] = []
    for i, r in enumerate(w.timeline, start=1):
        style = "bold red" if r.over else None
        counts = [" ".join(f"{d}={n}" for d, n in r.counts[k].items()) for k in keys]
        note = ""
        if r.replay_gap is not None:
            note = f"> maxSkew, see note {len(notes) + 1}"
            notes.append((i, replay_gap_text(r.replay_gap)))
        elif r.over:
            note = "> maxSkew (ScheduleAnyway)"
        cells = [str(i), r.created or "-", r.pod, r.node or "<pending>"] \
            + [r.domains.get(k) or "-" for k in keys] + counts + [str(r.skew[k]) for k in keys] + [note]
        rows.append([_styled(x, style) for x in cells])
    page.add(TIMELINE_NOTE.format(n=len(w.timeline)) + "\n")
    # the COUNTS columns, then the NOTE and the pod name, wrap to fit
    counts_at = [4 + len(keys) + i for i in range(len(keys))]
    page.table(table(headers, rows, no_headers, fit=fit, shrink=(*counts_at, len(headers) - 1, 2)))
    for n, (row, text) in enumerate(notes, start=1):
        page.add(f"  note {n} (row {row}): {text}\n")


def _short(key: str) -> str:
    return key.rsplit("/", 1)[-1]
