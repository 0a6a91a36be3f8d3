"""README example output and pictures stay in step with the code (scripts/docs regenerates them)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_demo_blocks_are_current():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "docs"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + "\nrun scripts/docs to refresh README.md"


def test_every_readme_picture_exists_and_is_svg():
    readme = (ROOT / "README.md").read_text()
    pictures = re.findall(r"!\[[^\]]*\]\((docs/img/[^)]+)\)", readme)
    assert len(pictures) >= 3
    for rel in pictures:
        text = (ROOT / rel).read_text()
        assert text.lstrip().startswith("<svg") and "tspread" in text, rel


def test_traps_page_explains_every_trap_code():
    from kubectl_tspread.engine import traps

    page = (ROOT / "docs" / "TRAPS.md").read_text()
    codes = [traps.CORDONED_DOMAIN, traps.INVISIBLE_EMPTY_DOMAIN, traps.MIN_DOMAINS_UNREACHABLE,
             traps.ROLLING_UPDATE_SKEW, traps.MISSING_LABELS, traps.ENFORCED_ONLY_AT_PLACEMENT]
    for code in codes + ["VolumePinning", "CordonedDomainTrap", "NoCapacity", "PdbBlocks", "MultiplePdbs",
                         "HostnameSpreadFull", "UnmanagedPod", "LocalStorage", "DaemonSetPod"]:
        assert code in page, f"docs/TRAPS.md does not explain {code}"
