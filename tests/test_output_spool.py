"""Issue 58, whole answers or none: the spool that holds a document until it is complete
(cli/output.py) fails as one error line when the machine cannot hold it."""

from __future__ import annotations

import os
import subprocess
import sys

from test_hostile_input import cluster, write

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_a_spool_that_cannot_grow_is_one_error_line_and_no_stdout(tmp_path):
    """A full disk (here the file-size limit, which the kernel reports the same way) under the
    spool's temporary file: one `error:` line naming the directory and what to do, nothing on
    stdout, never `unexpected OSError`."""
    path = write(tmp_path, cluster())
    child = (
        "import resource, signal, sys\n"
        "from kubectl_tspread.cli import main, output\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))\n"
        "output.SPOOL_MEMORY = 100\n"
        "main(['distribution', '-A', '--from-file', sys.argv[1], '-o', 'json'])\n"
    )
    done = subprocess.run([sys.executable, "-c", child, path], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": REPO, "TMPDIR": str(tmp_path)})
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    err = done.stderr
    assert err.startswith("error: cannot keep the output until it is complete: File too large in the temporary "
                          f"directory {tmp_path}; free space there or set TMPDIR") and err.count("\n") == 1, err
