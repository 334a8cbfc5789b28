"""The fence file ``snowid-fence 1 <unix_ms>\\n`` (docs/id-format.md §11)."""

from __future__ import annotations

import os
import re
from typing import Protocol

from .errors import DataLoss, InvalidArgument, Unavailable
from .layout import MAX_UNIX_MS

_FENCE = re.compile(rb"snowid-fence 1 ([0-9]{1,18})\n")


def parse_fence(data: bytes) -> int:
    """The fence in Unix ms; DATA_LOSS for anything but the exact form."""
    m = _FENCE.fullmatch(data)
    if m is None:
        raise DataLoss(f"not a fence file: {data[:48]!r}")
    value = int(m.group(1))
    if value > MAX_UNIX_MS:
        raise DataLoss(f"fence {value} ms is past the last representable millisecond")
    return value


def format_fence(unix_ms: int) -> bytes:
    if not 0 <= unix_ms <= MAX_UNIX_MS:
        raise InvalidArgument(f"a fence is 0 to {MAX_UNIX_MS} ms, not {unix_ms}")
    return b"snowid-fence 1 %d\n" % unix_ms


class FenceStore(Protocol):
    def load(self) -> int | None:
        """The stored fence in Unix ms, or None if none was ever stored."""
        ...

    def store(self, unix_ms: int) -> None:
        """Stores the fence durably; raises (UNAVAILABLE) if it could not."""
        ...


class FenceFile:
    """A fence in one file, replaced atomically: write ``<path>.tmp``, fsync,
    rename over ``<path>``, fsync the directory. A crash leaves the old or the
    new fence, never a torn one."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)

    def load(self) -> int | None:
        try:
            with open(self.path, "rb") as f:
                data = f.read(64)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise DataLoss(f"cannot read the fence file {self.path}: {e}") from None
        try:
            return parse_fence(data)
        except DataLoss as e:
            raise DataLoss(f"{self.path}: {e.message}") from None

    def store(self, unix_ms: int) -> None:
        data = format_fence(unix_ms)
        tmp = self.path + ".tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
            dir_fd = os.open(os.path.dirname(os.path.abspath(self.path)), os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as e:
            raise Unavailable(f"cannot store the fence in {self.path}: {e}") from None
