"""One exception family. `main()` turns any TspreadError into `error: <message>` and its exit code."""

from __future__ import annotations

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_FOUND = 3  # --exit-code: a violated constraint, an unschedulable pod, an unsafe drain plan


class TspreadError(Exception):
    """An error the user can act on. The message says what went wrong and what to do."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code

    @property
    def message(self) -> str:
        return str(self)


class UsageError(TspreadError):
    """Bad flags or arguments (a malformed selector, an unknown target kind)."""

    exit_code = EXIT_USAGE


class InputError(TspreadError):
    """A dump file that cannot be read or holds nothing usable."""


class ClusterError(TspreadError):
    """The API server refused or could not be reached."""


class NotFoundError(TspreadError):
    """A named workload, pod or node that the snapshot does not have."""
