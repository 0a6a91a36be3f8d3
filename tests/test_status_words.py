"""Every status word the code prints is defined once (statuses.STATUS_WORDS) and the same
definitions are in `distribution --help`, README's Status words and docs/JSON.md."""

from __future__ import annotations

from pathlib import Path

from kubectl_tspread.views.distribution import STATUS_NO_DOMAINS, STATUS_RANK
from kubectl_tspread.engine import spread
from kubectl_tspread.model.statuses import STATUS_WORDS
from test_blockers import _run

ROOT = Path(__file__).resolve().parent.parent


def test_every_status_the_code_prints_is_defined():
    emitted = {spread.STATUS_OK, spread.STATUS_AT_LIMIT, spread.STATUS_VIOLATED, spread.STATUS_DRIFTED,
               STATUS_NO_DOMAINS, "OVER LIMIT"}
    assert emitted == set(STATUS_WORDS)
    assert set(STATUS_RANK) <= set(STATUS_WORDS)
    drain = (ROOT / "kubectl_tspread" / "render" / "drain.py").read_text()
    assert '"OVER LIMIT"' in drain  # the drain table's word, defined here


def test_help_readme_and_json_docs_define_every_status(capsys):
    code, out, err = _run(capsys, "distribution", "--help")
    help_text = " ".join(out.split())
    readme = (ROOT / "README.md").read_text()
    json_doc = (ROOT / "docs" / "JSON.md").read_text()
    for word, meaning in STATUS_WORDS.items():
        assert f"{word} {' '.join(meaning.split())}" in help_text, word
        assert f"| `{word}` | {meaning} |" in readme, word
        assert f"| `{word}` | {meaning} |" in json_doc, word
