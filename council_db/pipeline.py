"""From a source's bytes to normalised rows, in this process or in a worker process.

Reading and validating a record costs about as much as inserting it, and SQLite inserts
from one process only, so for a large file a worker reads, validates and normalises
batches while this process writes them: the two halves run on two cores at once. The
worker never touches the database; it only sends finished batches through a pipe
(bounded by the pipe's buffer, so memory stays flat however large the file).
"""

from __future__ import annotations

import gc
import gzip
import multiprocessing
import os
import pickle
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, Callable, Iterator

from council_db.errors import CouncilDbError
from council_db.lines import parse_batch, read_batches
from council_db.records import Normalised, Normaliser

if TYPE_CHECKING:
    from council_db.importer import Source

PARALLEL_MIN_BYTES = 16 * 1024 * 1024


@dataclass
class Chunk:
    """One batch of lines, validated and normalised."""

    end_offset: int  # bytes of the file consumed up to and including this batch
    last_line: int
    lines: int
    position: int  # bytes of the source read so far, for progress (compressed for gzip)
    normalised: Normalised


@dataclass
class WorkerFailed:
    message: str


@contextmanager
def _open(source: Source, offset: int) -> Iterator[tuple[BinaryIO, Callable[[], int]]]:
    """The byte stream, and a function giving how far into the source it has read."""
    if source.kind == "stdin":
        yield sys.stdin.buffer, lambda: 0
        return
    with source.path.open("rb") as raw:
        if source.kind == "gzip":
            with gzip.GzipFile(fileobj=raw) as stream:
                yield stream, raw.tell
            return
        raw.seek(offset)
        yield raw, raw.tell


def chunks(source: Source, offset: int, first_line: int) -> Iterator[Chunk]:
    """Batches of the source from ``offset`` on, validated and normalised here."""
    normaliser = Normaliser()
    with _open(source, offset) as (stream, position):
        # Only a plain file can still be growing: elsewhere a last line is final.
        keep_tail = source.kind == "file"
        for batch in read_batches(stream, offset=offset, first_line=first_line, keep_partial_tail=keep_tail):
            yield Chunk(batch.end_offset, batch.first_line + len(batch.lines) - 1, len(batch.lines),
                        position(), normaliser.rows(parse_batch(batch), batch))


def _work(sender, source: Source, offset: int, first_line: int) -> None:
    """Worker process: send each chunk, then an empty message; a failure is sent, not raised."""
    gc.disable()  # as in the importer: no cycles are made, and collection costs ~30%
    try:
        for chunk in chunks(source, offset, first_line):
            sender.send_bytes(pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL))
        sender.send_bytes(b"")
    except BaseException as error:  # noqa: BLE001 - reported to the parent, which decides
        sender.send_bytes(pickle.dumps(WorkerFailed(f"{type(error).__name__}: {error}")))
    finally:
        sender.close()


def chunks_in_worker(source: Source, offset: int, first_line: int) -> Iterator[Chunk]:
    """The same chunks as ``chunks``, produced by a worker process."""
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    receiver, sender = context.Pipe(duplex=False)
    worker = context.Process(target=_work, args=(sender, source, offset, first_line), daemon=True)
    worker.start()
    sender.close()
    try:
        while data := receiver.recv_bytes():
            item = pickle.loads(data)
            if isinstance(item, WorkerFailed):
                raise CouncilDbError(f"{source.name}: reading failed: {item.message}")
            yield item
    except EOFError:
        raise CouncilDbError(f"{source.name}: the reading process stopped unexpectedly") from None
    finally:
        if worker.is_alive():
            worker.terminate()
        worker.join()
        receiver.close()


def source_chunks(source: Source, offset: int, first_line: int) -> Iterator[Chunk]:
    """A worker for large files on a machine with a spare core; in-process otherwise."""
    remaining = (source.size or 0) - offset
    if source.kind != "stdin" and remaining >= PARALLEL_MIN_BYTES and (os.cpu_count() or 1) > 1:
        return chunks_in_worker(source, offset, first_line)
    return chunks(source, offset, first_line)
