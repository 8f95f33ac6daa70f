"""Where an import of a file starts, and what an earlier, killed import left behind.

An import commits its progress (bytes and lines read) with its records and rejected
lines, so the next import of the same file starts after the last commit of any earlier
one, finished or killed: records would be deduplicated anyway, rejected lines would not.
A killed import's row is found by its lock (store/import_locks) and marked
``interrupted``; on SQLite the database is then checked for damage before anything is
written on top.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from council_db.store.import_locks import abandoned
from council_db.store.upkeep import check_after_crash

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from council_db.ingest.sources import Source
    from council_db.store.database import Database

FINGERPRINT_BYTES = 64 * 1024
LOCKED_KINDS = ("file", "gzip", "stdin", "stream", "copy")  # imports that hold a lock while they run


@dataclass(frozen=True)
class Start:
    offset: int = 0  # first byte to read
    lines_read: int = 0  # lines of the file already read by earlier imports
    first_line: int = 1  # number of the line read first: lines_read + 1, or lines_read if it continues
    note: str | None = None  # why a file imported before is read whole again


def fingerprint(path: Path, end: int) -> tuple[str, str]:
    """Hashes of the first and last 64 KiB before ``end``: a changed prefix means the file was
    replaced or rewritten, so an incremental read would be wrong."""
    with path.open("rb") as handle:
        head = hashlib.sha256(handle.read(min(end, FINGERPRINT_BYTES))).hexdigest()
        start = max(0, end - FINGERPRINT_BYTES)
        handle.seek(start)
        tail = hashlib.sha256(handle.read(end - start)).hexdigest()
    return head, tail


def close_abandoned(db: Database, connection: Connection) -> None:
    """Mark the imports whose process is gone ``interrupted``, in the caller's write
    transaction. Finding one means an unclean shutdown, so SQLite is checked first."""
    from sqlalchemy import select, update

    from council_db.store.models import Import

    running = list(connection.execute(
        select(Import.id).where(Import.status == "running", Import.source_kind.in_(LOCKED_KINDS))).scalars())
    gone = abandoned(db, connection, running)
    if gone:
        check_after_crash(db, connection)
        connection.execute(update(Import).where(Import.id.in_(gone)).values(status="interrupted"))


def resume_point(connection: Connection, source: Source, read_as: str = "llm-council") -> Start:
    """Where to read ``source``: after the last committed read of an earlier import of the
    same file in the same format (``read_as``), complete or interrupted, if the bytes it read
    are still the same. A file read first in the wrong format is read whole in the right one."""
    from sqlalchemy import or_, select

    from council_db.store.models import Import

    if source.kind != "file":
        return Start()
    last = connection.execute(
        select(Import.end_offset, Import.end_line, Import.head_sha256, Import.tail_sha256)
        .where(Import.source == source.name, Import.source_kind == "file", Import.format == read_as,
               # an interrupted row without hashes was written before they were kept at every commit
               or_(Import.status == "complete", (Import.status == "interrupted") & Import.head_sha256.is_not(None)))
        .order_by(Import.id.desc()).limit(1)
    ).first()
    if last is None or last.end_offset == 0:
        return Start()
    if (source.size or 0) < last.end_offset:
        return Start(note="file is shorter than when last imported (truncated or replaced): reading it whole")
    if fingerprint(source.path, last.end_offset) != (last.head_sha256, last.tail_sha256):
        return Start(note="file content changed since last import (replaced): reading it whole")
    return _line_start(source.path, last.end_offset, last.end_line)


def _line_start(path: Path, offset: int, lines_read: int) -> Start:
    """The start after ``lines_read`` lines ending at ``offset``. A last line taken without
    its newline (a complete record) is still line ``lines_read``: the newline that ends it
    later is skipped, and anything written straight after it continues that line."""
    with path.open("rb") as handle:
        handle.seek(offset - 1)
        before, after = handle.read(1), handle.read(1)
    if before == b"\n" or not after:
        return Start(offset, lines_read, lines_read + 1)
    if after == b"\n":
        return Start(offset + 1, lines_read, lines_read + 1)
    return Start(offset, lines_read, lines_read)


def held_tail(path: Path, end_offset: int, size: int) -> int:
    """Bytes between the last line read and the file's size when the import began that are
    not only whitespace: a last line without newline that does not parse yet (a record
    still being written, most likely), left for the next import."""
    with path.open("rb") as handle:
        handle.seek(end_offset)
        remaining = size - end_offset
        while remaining > 0 and (block := handle.read(min(FINGERPRINT_BYTES, remaining))):
            if block.strip():
                return size - end_offset
            remaining -= len(block)
    return 0
