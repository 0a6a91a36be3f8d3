"""Shell completion: `kubectl tspread completion bash|zsh|fish`, and kubectl's plugin protocol.

kubectl ≥ 1.26 completes `kubectl tspread <TAB>` by running `kubectl_complete-tspread` with the
words after `tspread`, the last one being the word under the cursor, and reads Cobra's format:
one candidate a line, then `:<directive>` (4 = do not fall back to file names).
Names of workloads and nodes come from the cluster when it answers within a short timeout;
any failure just yields no candidates — completion must never print errors.
"""

from __future__ import annotations

import click

COBRA_NO_FILE_COMP = 4
COMPLETION_TIMEOUT = 2.0
_KIND_PREFIXES = ("deployment/", "statefulset/", "replicaset/", "daemonset/", "pod/")
_KIND_OF_PREFIX = {"deployment": "Deployment", "deploy": "Deployment", "statefulset": "StatefulSet",
                   "sts": "StatefulSet", "replicaset": "ReplicaSet", "rs": "ReplicaSet",
                   "daemonset": "DaemonSet", "ds": "DaemonSet", "pod": "Pod", "po": "Pod"}


def _source_from_ctx(ctx):
    from kubectl_tspread.cli.options import SourceOptions

    p = ctx.params
    return SourceOptions(
        from_file=tuple(p.get("from_file") or ()), demo=bool(p.get("demo")), kubeconfig=p.get("kubeconfig"),
        context=p.get("context"), cluster=p.get("cluster"), user=p.get("user"), namespace=p.get("namespace"),
        all_namespaces=bool(p.get("all_namespaces")), request_timeout=COMPLETION_TIMEOUT, fail_fast=True,
    )


def _names(ctx, kind: str) -> list[str]:
    """Object names of `kind` from the snapshot source the command line names; [] on any failure."""
    try:
        from kubectl_tspread.cli.gcpause import load_quietly
        from kubectl_tspread.snapshot import load_snapshot

        snap = load_quietly(load_snapshot, _source_from_ctx(ctx), kinds=("Node",) if kind == "Node" else ("Node", kind))
        if kind == "Node":
            return sorted(n.name for n in snap.nodes)
        ns = snap.namespace
        if kind == "Pod":
            return sorted(p.name for p in snap.pods if ns is None or p.namespace == ns)
        return sorted(w.name for w in snap.workloads if w.kind == kind and (ns is None or w.namespace == ns))
    except Exception:  # noqa: BLE001 - completion stays silent
        return []


def complete_target(ctx, param, incomplete: str):
    from click.shell_completion import CompletionItem

    if "/" not in incomplete:
        return [CompletionItem(p) for p in _KIND_PREFIXES if p.startswith(incomplete)]
    prefix, _, partial = incomplete.partition("/")
    kind = _KIND_OF_PREFIX.get(prefix.lower())
    if kind is None:
        return []
    return [CompletionItem(f"{prefix}/{n}") for n in _names(ctx, kind) if n.startswith(partial)]


def complete_pod(ctx, param, incomplete: str):
    from click.shell_completion import CompletionItem

    if "/" in incomplete:
        return complete_target(ctx, param, incomplete)
    return [CompletionItem(n) for n in _names(ctx, "Pod") if n.startswith(incomplete)]


def complete_node(ctx, param, incomplete: str):
    from click.shell_completion import CompletionItem

    return [CompletionItem(n) for n in _names(ctx, "Node") if n.startswith(incomplete)]


def kubectl_complete(cli, args: list[str]) -> int:
    """Answer kubectl's plugin completion call in Cobra's format."""
    from click.shell_completion import ShellComplete

    words, incomplete = (args[:-1], args[-1]) if args else ([], "")
    if words and words[0] == "__complete":
        words = words[1:]
    try:
        comp = ShellComplete(cli, {}, "kubectl tspread", "_KUBECTL_TSPREAD_COMPLETE")
        items = comp.get_completions(words, incomplete)
    except Exception:  # noqa: BLE001
        items = []
    for item in items:
        click.echo(item.value)
    click.echo(f":{COBRA_NO_FILE_COMP}")
    return 0


def register(cli) -> None:
    @cli.command(context_settings={"help_option_names": ["-h", "--help"]}, epilog="""\b
Examples:
  # bash: kubectl-tspread completion in the current shell
  source <(kubectl tspread completion bash)
  # zsh, permanently
  kubectl tspread completion zsh > "${fpath[1]}/_kubectl-tspread"
  # fish
  kubectl tspread completion fish > ~/.config/fish/completions/kubectl-tspread.fish
  # `kubectl tspread <TAB>` (kubectl >= 1.26) needs only kubectl_complete-tspread on PATH,
  # which pip/pipx install next to kubectl-tspread
  command -v kubectl_complete-tspread
""")
    @click.argument("shell", type=click.Choice(("bash", "zsh", "fish")))
    def completion(shell):
        """Print a shell completion script for kubectl-tspread.

        Completes subcommands, flags, and workload, pod and node names from the cluster
        (silently nothing when the cluster does not answer within 2 seconds). For
        `kubectl tspread …` itself, kubectl ≥ 1.26 calls `kubectl_complete-tspread`,
        installed with the package; no script is needed for that.
        """
        from click.shell_completion import get_completion_class

        cls = get_completion_class(shell)
        comp = cls(cli, {}, "kubectl-tspread", "_KUBECTL_TSPREAD_COMPLETE")
        click.echo(comp.source())
