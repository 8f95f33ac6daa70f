"""What an import reads: files (plain or gzip), stdin, or another stream (a FIFO, or the
/dev/fd/N of a shell's <(...)), checked up front so that a typo stops the import before
anything is written."""

from __future__ import annotations

import errno
import gzip
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from council_db.errors import CouncilDbError
from council_db.text_values import printable_path

GZIP_MAGIC = b"\x1f\x8b\x08"  # RFC 1952: magic bytes and deflate, what every gzip tool writes
NOT_FILES = {stat.S_IFDIR: "directory", stat.S_IFSOCK: "socket", stat.S_IFBLK: "block device"}


@dataclass(frozen=True)
class Source:
    name: str
    kind: str  # file | gzip | stdin | stream (read once, start to end, as stdin is)
    path: Path | None
    size: int | None  # bytes when the import began: one figure for resuming, segments and provenance


def resolve_sources(names: list[str]) -> list[Source]:
    """Check every file up front: a typo should stop the import before anything is written."""
    return [Source("-", "stdin", None, None) if name == "-" else _source(name) for name in names]


def _source(name: str) -> Source:
    path, shown = Path(name).expanduser(), printable_path(name)
    try:
        mode = path.stat().st_mode
    except OSError as error:
        raise CouncilDbError(_missing(path, shown, error)) from None
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return Source(shown, "stream", path, None)  # not resolved: /dev/fd/N would become "pipe:[...]"
    if stat.S_ISDIR(mode):
        raise CouncilDbError(f"{shown} is a directory: give a bias_metrics.jsonl file in it")
    if not stat.S_ISREG(mode):
        raise CouncilDbError(f"{shown} is a {NOT_FILES.get(stat.S_IFMT(mode), 'special file')}, not a file: give a "
                             "path to a bias_metrics.jsonl file, or - for stdin")
    try:
        with path.open("rb") as handle:
            gzipped = _is_gzip(handle)
            size = os.fstat(handle.fileno()).st_size
    except PermissionError:
        raise CouncilDbError(f"{shown}: permission denied: you may not read it (chmod u+r {shown}, or run as its "
                             "owner)") from None
    resolved = path.resolve()
    return Source(printable_path(str(resolved)), "gzip" if gzipped else "file", resolved, size)


def _missing(path: Path, shown: str, error: OSError) -> str:
    """Why stat failed, in the user's terms: a symlink to nowhere or in a loop is not a typo."""
    if error.errno == errno.ELOOP:
        return f"{shown} is a symlink loop: it never reaches a file"
    if error.errno == errno.ENOENT and path.is_symlink():
        return f"{shown} is a symlink to {printable_path(os.readlink(path))}, which does not exist"
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        return f"{shown}: no such file (give a path to a bias_metrics.jsonl file, or - for stdin)"
    return f"{shown}: {error.strerror} (check the directories on its path)"


def _is_gzip(handle: BinaryIO) -> bool:
    """The gzip magic bytes, and a stream that really decompresses: a JSONL file whose first
    line happens to start with those bytes is read as lines (its first line is rejected)."""
    if handle.read(3) != GZIP_MAGIC:
        return False
    handle.seek(0)
    try:
        with gzip.GzipFile(fileobj=handle) as stream:
            stream.read(1)
    except (OSError, EOFError, zlib.error):  # BadGzipFile is an OSError
        return False
    return True
