"""Whole answers or none: a command's document is rendered completely before stdout sees a byte.

A JSON document cut after `"workloads": ` by an error in its fifth workload is worse than
no answer: a script reading it gets half a cluster. So stdout is, while a document is
rendered, a spool (memory up to SPOOL_MEMORY, a temporary file past it: a whole zone's
drain plan runs to gigabytes), copied to the real stdout only once rendering finished.
If rendering raises, nothing was written and main() prints the one `error:` line.

Text that stdout's encoding cannot hold (a lone surrogate such as \\ud800 in a name read
from JSON) is written backslash-escaped, never fatal: in a JSON string that escape is the
same character again.
"""

from __future__ import annotations

import codecs
import io
import shutil
import sys
import tempfile
from contextlib import contextmanager
from typing import IO, Iterator

SPOOL_MEMORY = 64 << 20
_CHUNK = 1 << 20


class _Spool(io.TextIOWrapper):
    """A text stream into a SpooledTemporaryFile that answers isatty() as the stream it
    stands in for (colors and widths are chosen as for the real stdout)."""

    def __init__(self, real: IO[str]):
        self.encoding_of_real = getattr(real, "encoding", None) or "utf-8"
        self.spooled = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY)
        super().__init__(self.spooled, encoding=self.encoding_of_real, errors="backslashreplace",  # type: ignore
                         write_through=True)
        self._real = real

    def isatty(self) -> bool:
        isatty = getattr(self._real, "isatty", None)
        return bool(isatty and isatty())

    def copy_to(self, real: IO[str]) -> None:
        self.flush()
        self.spooled.seek(0)
        real.flush()
        buffer = getattr(real, "buffer", None)
        if buffer is not None:
            shutil.copyfileobj(self.spooled, buffer, _CHUNK)
            buffer.flush()
            return
        decoder = codecs.getincrementaldecoder(self.encoding_of_real)("replace")
        while True:
            chunk = self.spooled.read(_CHUNK)
            real.write(decoder.decode(chunk, final=not chunk))
            if not chunk:
                break
        real.flush()


@contextmanager
def whole_answer() -> Iterator[IO[str]]:
    """sys.stdout is a spool inside the block; its text reaches the real stdout only when the
    block ends without an exception."""
    real = sys.stdout
    spool = _Spool(real)
    sys.stdout = spool
    try:
        yield spool
        sys.stdout = real
        spool.copy_to(real)
    finally:
        sys.stdout = real
        spool.close()
