"""Reusable option bundles, applied as decorators: kubectl's global flags, snapshot sources, output."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import click

OUTPUT_FORMATS = ("table", "wide", "json", "yaml")
MAX_DURATION = float((1 << 63) - 1) / 1e9  # Go's time.Duration, as kubectl parses the flag


@dataclass
class SourceOptions:
    """Where the snapshot comes from, and kubectl's connection flags for the live path."""

    from_file: tuple[str, ...] = ()
    demo: bool = False
    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    all_namespaces: bool = False
    request_timeout: float | None = None
    as_user: str | None = None
    as_groups: tuple[str, ...] = field(default_factory=tuple)
    fail_fast: bool = False  # one attempt per request, no retries (shell completion)
    kube_version: str | None = None  # --kube-version: the scheduler rules to follow

    def kube_options(self, **overrides):
        """The live loader's KubeOptions for these flags (one place that maps flag to field)."""
        from kubectl_tspread.snapshot.kubeconfig import KubeOptions

        fields = dict(kubeconfig=self.kubeconfig, context=self.context, cluster=self.cluster, user=self.user,
                      namespace=self.namespace, all_namespaces=self.all_namespaces,
                      request_timeout=self.request_timeout, as_user=self.as_user, as_groups=tuple(self.as_groups))
        fields.update(overrides)
        return KubeOptions(**fields)


@dataclass
class OutputOptions:
    output: str = "table"
    no_headers: bool = False
    color: str = "auto"

    @property
    def structured(self) -> bool:
        return self.output in ("json", "yaml")

    @property
    def wide(self) -> bool:
        return self.output == "wide"


def parse_duration(ctx, param, value):
    """kubectl's --request-timeout: '0' (no timeout), '30', '30s', '1m', '2h', '1m30s', and Go's
    smaller units (ns, us, µs, ms). ASCII digits only, as Go reads them: '١s' (an Arabic-Indic
    one) was read as 1s."""
    if value is None:
        return None
    text = str(value).strip()
    if re.fullmatch(r"[0-9]+(\.[0-9]+)?", text):
        seconds = float(text)
    else:
        parts = re.findall(r"([0-9]+(?:\.[0-9]+)?)(ns|us|µs|μs|ms|s|m|h)", text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise click.BadParameter(f"{value!r} is not a duration; use e.g. 30s, 1m or 0 for none")
        unit = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 0.001, "s": 1, "m": 60, "h": 3600}
        seconds = sum(float(n) * unit[u] for n, u in parts)
    if seconds > MAX_DURATION:
        raise click.BadParameter(f"{value!r} is longer than any duration kubectl accepts (about 2562047h); "
                                 "use e.g. 30s or 1m, or 0 for none")
    return None if seconds == 0 else seconds


_SOURCE_FLAGS = [
    click.option("--from-file", "from_file", multiple=True, metavar="PATH",
                 help="Read the cluster from dumps (`kubectl tspread dump`, or `kubectl get … -o json|yaml`) "
                      "instead of the API "
                      "(repeatable; '-' is stdin; a directory reads every .json/.yaml in it; "
                      "FIFOs and devices are refused)."),
    click.option("--demo", is_flag=True, help="Use the built-in demo cluster (no cluster needed)."),
    click.option("--kubeconfig", metavar="PATH", help="Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)."),
    click.option("--context", metavar="NAME", help="The kubeconfig context to use."),
    click.option("--cluster", metavar="NAME", help="The kubeconfig cluster to use."),
    click.option("--user", metavar="NAME", help="The kubeconfig user to use."),
    click.option("-n", "--namespace", metavar="NS", help="The namespace (default: the context's namespace)."),
    click.option("-A", "--all-namespaces", "all_namespaces", is_flag=True, help="Look at every namespace."),
    click.option("--request-timeout", callback=parse_duration, metavar="DURATION",
                 help="Time to wait for each API request, its retries and its whole answer included, "
                      "e.g. 30s or 1m (0: the default, 120s a request)."),
    click.option("--as", "as_user", metavar="USER", help="Username to impersonate."),
    click.option("--as-group", "as_groups", multiple=True, metavar="GROUP", help="Group to impersonate (repeatable)."),
    click.option("--kube-version", "kube_version", metavar="X.Y",
                 help="Follow the scheduler rules of this Kubernetes minor (supported: 1.33 to 1.37; default: "
                      "the API server's /version, and 1.37 for --from-file and --demo)."),
]

_OUTPUT_FLAGS = [
    click.option("-o", "--output", type=click.Choice(OUTPUT_FORMATS), default="table", show_default=True,
                 help="Output format."),
    click.option("--no-headers", is_flag=True, help="Do not print table headers."),
    click.option("--color", type=click.Choice(("auto", "always", "never")), default="auto", show_default=True,
                 help="Colorize output (auto: only on a terminal; NO_COLOR is honored)."),
]


def _apply(flags, f):
    for opt in reversed(flags):
        f = opt(f)
    return f


def source_options(f):
    """Adds the snapshot flags and folds them into one `source: SourceOptions` argument."""
    names = ("from_file", "demo", "kubeconfig", "context", "cluster", "user", "namespace",
             "all_namespaces", "request_timeout", "as_user", "as_groups", "kube_version")

    @functools.wraps(f)  # also carries the click params already attached to f
    def wrapper(**kw):
        kw["source"] = SourceOptions(**{n: kw.pop(n) for n in names})
        return f(**kw)

    return _apply(_SOURCE_FLAGS, wrapper)


def output_options(f):
    """Adds -o/--no-headers/--color and folds them into one `out: OutputOptions` argument."""

    @functools.wraps(f)
    def wrapper(**kw):
        kw["out"] = OutputOptions(kw.pop("output"), kw.pop("no_headers"), kw.pop("color"))
        return f(**kw)

    return _apply(_OUTPUT_FLAGS, wrapper)


def debug_option(f):
    """-v/--debug: cli.main() reads it from argv, since errors can happen before click parses."""
    return click.option("-v", "--debug", "debug", is_flag=True, expose_value=False,
                        help="Print a traceback with errors.")(f)
