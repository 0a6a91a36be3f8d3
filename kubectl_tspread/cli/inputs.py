"""The `warning:` line for kinds an answer depends on that the input lacked (item of every command).

cli/__init__.py, cli/pending.py and cli/drain.py call `warn_missing_kinds(snapshot, command)` once the
snapshot is loaded: it prints one `warning: …` line on stderr (like kubectl) and returns the
kinds, which the command passes to its JSON/YAML view (`warnings`, render/structured.py
`warnings_view`) and, for drain-safe, to its verdict.
"""

from __future__ import annotations

import click


def warn_missing_kinds(snapshot, command: str) -> list[str]:
    from kubectl_tspread.views.inputs import missing_kinds
    from kubectl_tspread.render.text import missing_kinds_message

    missing = missing_kinds(snapshot, command)
    if missing:
        click.echo(f"warning: {missing_kinds_message(missing)}", err=True)
    return missing
