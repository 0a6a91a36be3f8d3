"""Every command has help with a description, flags and 2–4 examples, and a README section."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kubectl_tspread.cli import cli

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
COMMANDS = sorted(cli.commands)


def test_the_three_verbs_and_completion_are_registered():
    assert {"distribution", "why-pending", "drain-safe", "completion"} <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_command_has_description_flags_and_examples(name):
    cmd = cli.commands[name]
    assert cmd.help and len(cmd.help.split()) >= 8, f"{name} lacks a description"
    result = CliRunner().invoke(cli, [name, "--help"], prog_name="kubectl tspread")
    assert result.exit_code == 0
    assert result.output.startswith(f"Usage: kubectl tspread {name}")
    assert "Options:" in result.output
    examples = [line for line in (cmd.epilog or "").splitlines() if line.strip().startswith(("kubectl ", "source "))]
    assert 2 <= len(examples) <= 5, f"{name} help should carry 2-4 examples, has {len(examples)}"
    for p in cmd.params:
        if isinstance(p, click.Option) and not p.hidden:
            assert p.help, f"{name} {p.opts} has no help text"


SECTION = {"completion": "Shell completion"}


@pytest.mark.parametrize("name", COMMANDS)
def test_command_has_a_readme_section(name):
    title = SECTION.get(name, name)
    assert re.search(rf"^## {re.escape(title)}\b", README, re.M), f"README.md lacks a '## {title}' section"


@pytest.mark.parametrize("name", [c for c in COMMANDS if c != "completion"])
def test_every_flag_is_mentioned_in_the_readme(name):
    """Keep README in step with the code: each command flag appears somewhere in it."""
    shared = {"--kubeconfig", "--context", "--cluster", "--user", "--namespace", "--all-namespaces",
              "--request-timeout", "--as", "--as-group", "--output", "--no-headers", "--color", "--debug",
              "--help", "--from-file", "--demo"}
    for p in cli.commands[name].params:
        if not isinstance(p, click.Option):
            continue
        longs = [o for o in p.opts if o.startswith("--")]
        if longs and longs[0] not in shared:
            assert longs[0] in README, f"README.md does not mention {name} {longs[0]}"


def test_top_level_help_lists_commands_quickly():
    result = CliRunner().invoke(cli, ["--help"], prog_name="kubectl tspread")
    assert result.exit_code == 0
    for name in ("distribution", "why-pending", "drain-safe"):
        assert name in result.output
