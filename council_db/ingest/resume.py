"""Where an import of a file starts, and what an earlier, killed import left behind.

An import commits its progress (bytes and lines read) with its records and rejected
lines, so the next import of the same file (with the same format and options) starts after
the last commit of earlier ones, finished or killed, unless undoing an import left a gap.
A killed import's row is found by its lock (store/import_locks) and marked
``interrupted``; on SQLite the database is then checked for damage before anything is
written on top.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from council_db.ingest.formats.options import FormatOptions, described
from council_db.store.import_locks import abandoned
from council_db.store.named_sql import run, same_as
from council_db.store.upkeep import check_after_crash

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from council_db.ingest.sources import Source
    from council_db.store.database import Database

FINGERPRINT_BYTES = 64 * 1024
LOCKED_KINDS = ("file", "gzip", "stdin", "stream", "copy")  # imports that hold a lock while they run
# Earlier reads of a file: this format, finished (an interrupted row without hashes was written
# before they were kept at every commit)
SAME_FILE = ("source = :source AND source_kind = 'file' AND format = :format AND (status = 'complete' OR "
             "(status = 'interrupted' AND head_sha256 IS NOT NULL))")


class Read(NamedTuple):
    """An earlier import's read of a file (its ``imports`` row)."""

    id: int
    start_offset: int
    end_offset: int
    end_line: int
    head_sha256: str | None
    tail_sha256: str | None
    records_lost: bool


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
    running = [import_id for (import_id,) in run(connection, "SELECT id FROM imports WHERE status = 'running' AND "
                                                              "source_kind IN :kinds", {"kinds": LOCKED_KINDS})]
    gone = abandoned(db, connection, running)
    if gone:
        check_after_crash(db, connection)
        run(connection, "UPDATE imports SET status = 'interrupted' WHERE id IN :gone", {"gone": gone})


def resume_point(connection: Connection, source: Source, options: FormatOptions | None = None) -> Start:
    """Where to read ``source``: after the bytes that earlier imports of the same file with the
    same ``options`` (format and its options) read without a gap, complete or interrupted, if
    they are still the same bytes. A file read first in the wrong format, or with other
    options, is read whole with these. Reads whose records went with a deleted import
    (``records_lost``, store/provenance.py), or a read deleted itself, leave a gap: the next
    import reads the file again from there."""
    options = options or FormatOptions()
    if source.kind != "file":
        return Start()
    same_file = {"source": source.name, "format": options.format, "options": options.key()}
    reads = [Read(*row) for row in run(
        connection, f"SELECT {', '.join(Read._fields)} FROM imports WHERE {SAME_FILE} "
                    f"AND options {same_as(connection)} :options ORDER BY id", same_file)]
    first, last = _read_through(reads)
    if last is None or last.end_offset == 0:
        return Start(note=_why_whole(connection, same_file, reads))
    if (source.size or 0) < last.end_offset:
        return Start(note="file is shorter than when last imported (truncated or replaced): reading it whole")
    if fingerprint(source.path, last.end_offset) != (last.head_sha256, last.tail_sha256):
        return Start(note="file content changed since last import (replaced): reading it whole")
    start = _line_start(source.path, last.end_offset, last.end_line)
    if any(read.end_offset > last.end_offset for read in reads if read.id > first.id):
        return replace(start, note=f"reading it again from line {start.first_line}: what an earlier import of it "
                                   "read after that went with a deleted import")
    return start


def _read_through(reads: list[Read]) -> tuple[Read | None, Read | None]:
    """The first and the last of the reads that cover the file without a gap from its start:
    the last read of it whole (start_offset 0), then the reads after it that continue where
    the bytes read so far end (or one byte further: a newline left by a line taken without
    it). Reads whose records went with a deleted import cover nothing. (None, None) without
    a read of it whole."""
    kept = [read for read in reads if not read.records_lost]
    whole = [read for read in kept if read.start_offset == 0]
    if not whole:
        return None, None
    first = last = whole[-1]
    for read in sorted((r for r in kept if r.id > first.id), key=lambda r: (r.start_offset, r.id)):
        if read.start_offset > last.end_offset + 1:
            break
        if read.end_offset >= last.end_offset:
            last = read
    return first, last


def _why_whole(connection: Connection, same_file: dict[str, Any], reads: list[Read]) -> str | None:
    """Why a file imported before is read whole: its reads went with a deleted import, or it
    was imported with other options (the most recent such import named)."""
    if any(read.end_offset for read in reads):
        return "reading it whole: what earlier imports of it read went with a deleted import"
    other = run(connection, f"SELECT id, options FROM imports WHERE {SAME_FILE} "
                            f"AND options {same_as(connection, False)} :options ORDER BY id DESC LIMIT 1",
                same_file).first()
    if other is None:
        return None
    (other_id, other_options), key = other, same_file["options"]
    return (f"imported before with other options (import {other_id}: {described(other_options)}): reading it whole "
            f"with these ({described(key)}); records import {other_id} stored stay as it stored them (delete "
            f"--import {other_id} first to store them as read now)")


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
