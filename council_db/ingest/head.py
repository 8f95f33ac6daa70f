"""The first bytes of a source, read without consuming them: what the sniffer judges a file
by, and where a table's header and first scores are found before anything is stored."""

from __future__ import annotations

import gzip
import sys
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from council_db.ingest.sources import Source

SAMPLE_BYTES = 64 * 1024


def head(source: Source) -> bytes | None:
    """The first SAMPLE_BYTES of the source, without consuming them; None where they cannot be
    read twice (a FIFO) or not at all (the import then says why)."""
    if source.kind == "stdin":
        peek = getattr(sys.stdin.buffer, "peek", None)
        return None if peek is None else peek(SAMPLE_BYTES)[:SAMPLE_BYTES]
    if source.kind == "stream" or source.path is None:
        return None
    try:
        if source.kind == "gzip":
            with gzip.open(source.path, "rb") as stream:
                return stream.read(SAMPLE_BYTES)
        with source.path.open("rb") as handle:
            return handle.read(SAMPLE_BYTES)
    except (OSError, EOFError, zlib.error):
        return None
