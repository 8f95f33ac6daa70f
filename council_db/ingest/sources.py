"""What an import reads: files (plain or gzip) or stdin, checked up front so that a typo stops
the import before anything is written."""

from __future__ import annotations

import gzip
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from council_db.errors import CouncilDbError

GZIP_MAGIC = b"\x1f\x8b\x08"  # RFC 1952: magic bytes and deflate, what every gzip tool writes


@dataclass(frozen=True)
class Source:
    name: str
    kind: str
    path: Path | None
    size: int | None  # bytes when the import began: one figure for resuming, segments and provenance


def resolve_sources(names: list[str]) -> list[Source]:
    """Check every file up front: a typo should stop the import before anything is written."""
    sources = []
    for name in names:
        if name == "-":
            sources.append(Source("-", "stdin", None, None))
            continue
        path = Path(name).expanduser()
        if not path.is_file():
            raise CouncilDbError(f"{name}: no such file (give a path to a bias_metrics.jsonl file, or - for stdin)")
        with path.open("rb") as handle:
            gzipped = _is_gzip(handle)
            size = os.fstat(handle.fileno()).st_size
        sources.append(Source(str(path.resolve()), "gzip" if gzipped else "file", path.resolve(), size))
    return sources


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
