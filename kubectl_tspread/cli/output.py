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

from kubectl_tspread.model.errors import TspreadError

SPOOL_MEMORY = 64 << 20
_CHUNK = 1 << 20


class _Spool(io.TextIOBase):
    """A text stream kept as encoded bytes, in memory up to SPOOL_MEMORY and in a temporary
    file past it, that answers isatty() and `encoding` as the stream it stands in for (colors
    and widths are chosen as for the real stdout)."""

    def __init__(self, real: IO[str]):
        super().__init__()
        self._encoding = getattr(real, "encoding", None) or "utf-8"
        self._real = real
        self._memory: io.BytesIO | None = io.BytesIO()
        self._file: IO[bytes] | None = None

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding

    @property
    def errors(self) -> str:  # type: ignore[override]
        return "backslashreplace"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        isatty = getattr(self._real, "isatty", None)
        return bool(isatty and isatty())

    def write(self, text: str) -> int:  # a bytes argument fails, as on any text stream
        data = text.encode(self._encoding, "backslashreplace")
        try:
            if self._memory is not None:
                self._memory.write(data)
                if self._memory.tell() > SPOOL_MEMORY:  # from here on, a file
                    self._file = tempfile.TemporaryFile()
                    self._file.write(self._memory.getbuffer())
                    self._memory = None
            else:
                self._file.write(data)  # type: ignore[union-attr]
        except OSError as e:
            raise _cannot_keep(e) from None
        return len(text)

    def copy_to(self, real: IO[str]) -> None:
        source: IO[bytes] = self._memory if self._memory is not None else self._file  # type: ignore[assignment]
        try:
            source.seek(0)  # the file's last buffered bytes are written here
        except OSError as e:
            raise _cannot_keep(e) from None
        real.flush()
        buffer = getattr(real, "buffer", None)
        if buffer is not None:
            shutil.copyfileobj(source, buffer, _CHUNK)
            buffer.flush()
            return
        decoder = codecs.getincrementaldecoder(self._encoding)("replace")
        while True:
            chunk = source.read(_CHUNK)
            real.write(decoder.decode(chunk, final=not chunk))
            if not chunk:
                break
        real.flush()

    def close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:  # its last buffered bytes could not be written: nothing reads them now
                pass
        self._memory = self._file = None
        super().close()


def _cannot_keep(e: OSError) -> TspreadError:
    """The spool's file could not grow (a full disk is the machine's state, not a bug): where,
    and what to do."""
    return TspreadError(f"cannot keep the output until it is complete: {e.strerror or e} in the temporary "
                        f"directory {tempfile.gettempdir()}; free space there or set TMPDIR to a larger one "
                        "(a big drain plan as JSON or YAML runs to gigabytes; the table is far shorter)")


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
