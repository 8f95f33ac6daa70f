"""From a source's bytes to normalised rows, in this process or in worker processes.

Reading and validating a record costs more than inserting it, and SQLite takes inserts
from one process at a time, so a large file is cut at line boundaries into segments that
worker processes read, validate and normalise while this process writes. Workers take
segments in turn (worker k has segments k, k+W, k+2W, ...), and this process reads their
results in segment order, so records, line numbers and checkpoints stay in file order.
Workers never touch the database; each sends finished batches through its own pipe. A
thread per pipe moves them into a bounded queue here, so a worker can run ahead while
this process is busy with another's segment, and memory stays flat however large the file.
"""

from __future__ import annotations

import gc
import gzip
import multiprocessing
import os
import pickle
import queue
import sys
import threading
import zlib
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, Callable, Iterator

from council_db.errors import CouncilDbError
from council_db.ingest.lines import LineBatch, Parsed, parse_batch, read_batches
from council_db.ingest.normalise import Normalised, Normaliser
from council_db.ingest.quoted_rows import row_cuts, whole_rows

Parse = Callable[[LineBatch], Parsed]  # a format's reader of a batch of lines (ingest/formats)

if TYPE_CHECKING:
    from council_db.ingest.formats.judge_lines import LineReader
    from council_db.ingest.sources import Source

PARALLEL_MIN_BYTES = 16 * 1024 * 1024
SEGMENT_BYTES = 8 * 1024 * 1024
MAX_WORKERS = 2
QUEUED_CHUNKS = 12  # per worker: ~2.5 MB of pickled rows (4,000 records a chunk)


@dataclass
class Chunk:
    """One batch of lines, validated and normalised."""

    end_offset: int  # bytes of the file consumed up to and including this batch
    last_line: int
    lines: int
    position: int  # bytes of the source read so far, for progress (compressed for gzip)
    normalised: Normalised

    @classmethod
    def joined(cls, parts: list[Chunk]) -> Chunk:
        """Consecutive chunks as one, ending where the last one ends."""
        last = parts[-1]
        return cls(last.end_offset, last.last_line, sum(part.lines for part in parts), last.position,
                   Normalised.joined([part.normalised for part in parts]))

    def shifted(self, lines_before: int) -> Chunk:
        """Line numbers made absolute: a worker numbers each segment from 1."""
        self.last_line += lines_before
        for rejected in self.normalised.rejected:
            rejected.line_number += lines_before
        return self


@dataclass(frozen=True)
class Segment:
    start: int
    end: int | None  # None: to the end of the stream
    last: bool  # reaches the end of the file, so its last line may still be being written
    quoted: bool = False  # CSV: a quoted field may hold line breaks (ingest/quoted_rows.py)


@dataclass
class SegmentDone:
    lines: int


@dataclass
class WorkerFailed:
    message: str
    own: bool = False  # a CouncilDbError: its message is the user's, told as it is


@contextmanager
def _open(source: Source, offset: int) -> Iterator[tuple[BinaryIO, Callable[[], int]]]:
    """The byte stream, and a function giving how far into the source it has read."""
    if source.kind == "stdin":
        yield sys.stdin.buffer, lambda: 0
        return
    if source.kind == "stream":  # a FIFO cannot tell or seek
        with source.path.open("rb") as raw:
            yield raw, lambda: 0
        return
    with source.path.open("rb") as raw:
        if source.kind == "gzip":
            with gzip.GzipFile(fileobj=raw) as stream:
                yield stream, raw.tell
            return
        raw.seek(offset)
        yield raw, raw.tell


def _read(source: Source, segment: Segment, first_line: int, normaliser: Normaliser) -> Iterator[Chunk]:
    try:
        yield from _read_stream(source, segment, first_line, normaliser)
    except (EOFError, gzip.BadGzipFile, zlib.error) as error:  # only gzip streams raise these
        raise CouncilDbError(f"{source.name}: the gzip stream is damaged or cut short ({error}). Re-compress "
                             "the file or import it uncompressed; importing again stores nothing twice") from None


def _read_stream(source: Source, segment: Segment, first_line: int, normaliser: Normaliser) -> Iterator[Chunk]:
    with _open(source, segment.start) as (stream, position):
        length = None if segment.end is None else segment.end - segment.start
        # Only a plain file can still be growing: elsewhere a last line (or CSV row) is final.
        keep_tail = source.kind == "file" and segment.last
        batches = read_batches(stream, offset=segment.start, first_line=first_line, keep_partial_tail=keep_tail,
                               length=length)
        for batch in whole_rows(batches, hold_open=keep_tail) if segment.quoted else batches:
            yield Chunk(batch.end_offset, batch.first_line + len(batch.lines) - 1, len(batch.lines),
                        position(), normaliser.normalise(batch))


def document_chunks(source: Source, offset: int, first_line: int, reader: LineReader) -> Iterator[Chunk]:
    """A JSON document's batches, read in this process (a document is never appended to, so
    its last line is final), then what its reader holds when the input ends: an entry the file
    cut short is rejected, not lost."""
    normaliser = Normaliser(reader)
    last = None
    for last in _document_read(source, offset, first_line, reader, normaliser):
        yield last
    held = reader.end()
    if last is not None and (held.records or held.rejected):
        yield Chunk(last.end_offset, last.last_line, 0, last.position,
                    normaliser.rows(held, LineBatch(last.last_line + 1, [], last.end_offset)))


def _document_read(source: Source, offset: int, first_line: int, reader: LineReader,
                   normaliser: Normaliser) -> Iterator[Chunk]:
    """The document's lines in batches; or, from a reader that cuts its file itself (an archive:
    ``batches()``), its batches: all of them from offset 0, none from its end (read already;
    the importer reads a changed document again from 0)."""
    own = getattr(reader, "batches", None)
    if own is None:
        return _read(source, Segment(offset, None, False), first_line, normaliser)
    if offset:
        return iter(())
    return (Chunk(batch.end_offset, batch.first_line + len(batch.lines) - 1, len(batch.lines), batch.end_offset,
                  normaliser.normalise(batch)) for batch in own())


def chunks(source: Source, offset: int, first_line: int, parse: Parse = parse_batch, *,
           quoted: bool = False) -> Iterator[Chunk]:
    """Batches of the source from ``offset`` on, validated and normalised in this process. The
    file may still be appended to, so a last line without newline that does not parse yet is
    held for the next import. ``quoted``: CSV rows, kept whole across line breaks in quoted
    fields."""
    return _read(source, Segment(offset, None, True, quoted), first_line, Normaliser(parse))


def _work(sender, source: Source, segments: list[Segment], readers: list, parse: Parse) -> None:
    """Worker process: each segment's chunks then a SegmentDone; a failure is sent, not raised.

    A forked worker inherits the read ends of the pipes made so far, its own included; it
    closes them, so that if the importer dies (SIGKILL, out of memory) the worker's next
    send fails and it ends, instead of blocking forever on a pipe that only it still holds."""
    for reader in readers:
        reader.close()
    gc.disable()  # as in the importer: no cycles are made, and collection costs ~30%
    normaliser = Normaliser(parse)
    try:
        for segment in segments:
            lines = 0
            for chunk in _read(source, segment, 1, normaliser):
                lines = chunk.last_line
                sender.send_bytes(pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL))
            sender.send_bytes(pickle.dumps(SegmentDone(lines)))
    except BaseException as error:  # noqa: BLE001 - reported to the parent, which decides
        failed = (WorkerFailed(str(error), own=True) if isinstance(error, CouncilDbError)
                  else WorkerFailed(f"{type(error).__name__}: {error}"))
        with suppress(OSError):  # the parent may be gone: then there is no one to tell
            sender.send_bytes(pickle.dumps(failed))
    finally:
        sender.close()


def segments(source: Source, start: int, end: int, quoted: bool = False) -> list[Segment]:
    """[start, end) cut just after a newline about every SEGMENT_BYTES (``quoted``: after a
    newline that ends a CSV row)."""
    if quoted:
        cuts = row_cuts(source, start, end, SEGMENT_BYTES)
        return [Segment(a, b, b == end, True) for a, b in zip(cuts, cuts[1:] + [end])]
    cuts = [start]
    with source.path.open("rb") as handle:
        while cuts[-1] + SEGMENT_BYTES < end:
            handle.seek(cuts[-1] + SEGMENT_BYTES)
            handle.readline()
            if handle.tell() >= end:
                break
            cuts.append(handle.tell())
    bounds = list(zip(cuts, cuts[1:] + [end]))
    return [Segment(a, b, b == end) for a, b in bounds]


def chunks_in_workers(source: Source, parts: list[Segment], first_line: int, workers: int,
                      parse: Parse = parse_batch) -> Iterator[Chunk]:
    """The same chunks as ``chunks``, produced by worker processes, in file order."""
    with ExitStack() as stack:
        yield from _in_file_order(_started(stack, source, parts, workers, parse), parts, first_line, source)


def _started(stack: ExitStack, source: Source, parts: list[Segment], workers: int, parse: Parse) -> list[queue.Queue]:
    """Worker processes reading ``parts`` in turn, each with a thread moving its pipe's messages
    into a queue here (the queues, in worker order); ``stack`` stops them."""
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    workers = min(workers, len(parts))
    receivers = []
    for number in range(workers):  # every fork before any thread starts: forking threads risks deadlock
        receiver, sender = context.Pipe(duplex=False)
        readers = [made for _, made in receivers] + [receiver]
        worker = context.Process(target=_work, args=(sender, source, parts[number::workers], readers, parse),
                                 daemon=True)
        worker.start()
        sender.close()
        receivers.append((worker, receiver))
    queues = []
    for worker, receiver in receivers:
        received: queue.Queue[bytes | None] = queue.Queue(QUEUED_CHUNKS)
        drain = threading.Thread(target=_drain, args=(receiver, received), daemon=True)
        drain.start()
        stack.callback(_stop, worker, drain, receiver, received)
        queues.append(received)
    return queues


def _in_file_order(queues: list[queue.Queue], parts: list[Segment], first_line: int,
                   source: Source) -> Iterator[Chunk]:
    lines_before = first_line - 1
    for index in range(len(parts)):
        received = queues[index % len(queues)]
        while not isinstance(item := _receive(received, source), SegmentDone):
            yield item.shifted(lines_before)
        lines_before += item.lines


class HeadStart:
    """Worker processes reading a large file from its start before the database is opened.

    The importing process spends its first second or more starting up (SQLAlchemy, the
    schema's models, the write lock, the resume point) with the other core idle; workers
    forked before that read meanwhile, up to their queues' bound. Most imports read a file
    from its start; when the resume point says otherwise, the workers are stopped unused
    and the file is read from there as before. ``close`` stops them (idempotent)."""

    def __init__(self, source: Source, parse: Parse, quoted: bool) -> None:
        self.source, self.parse, self.quoted = source, parse, quoted
        self.parts = segments(source, 0, source.size or 0, quoted)
        self._stack = ExitStack()
        self._queues = _started(self._stack, source, self.parts, min(MAX_WORKERS, os.cpu_count() or 1), parse)

    @classmethod
    def of(cls, source: Source, parse: Parse, *, quoted: bool = False) -> HeadStart | None:
        """Workers for ``source`` read from its start, where source_chunks would give a
        whole file to several workers; None otherwise (stdin, gzip, a small file, one core)."""
        if not _in_segments(source, 0):
            return None
        return cls(source, parse, quoted)

    def chunks(self, offset: int, first_line: int) -> Iterator[Chunk] | None:
        """The workers' chunks when the import starts where they did; else None, and they stop."""
        if offset or first_line != 1:
            self.close()
            return None
        return self._chunks()

    def _chunks(self) -> Iterator[Chunk]:
        with self._stack:
            yield from _in_file_order(self._queues, self.parts, 1, self.source)

    def close(self) -> None:
        self._stack.close()


def _drain(receiver, received: queue.Queue) -> None:
    """Move a worker's messages from its pipe into a queue; None when the pipe closes."""
    try:
        while True:
            received.put(receiver.recv_bytes())
    except (EOFError, OSError):
        received.put(None)


def _receive(received: queue.Queue, source: Source) -> Chunk | SegmentDone:
    data = received.get()
    if data is None:
        raise CouncilDbError(f"{source.name}: a reading process stopped unexpectedly")
    item = pickle.loads(data)
    if isinstance(item, WorkerFailed):
        raise CouncilDbError(item.message if item.own else f"{source.name}: reading failed: {item.message}")
    return item


def _stop(worker, drain: threading.Thread, receiver, received: queue.Queue) -> None:
    """End the worker, let its drain thread read the pipe to its end, then close the pipe.

    The worker held the pipe's only write end, so once it is gone the thread meets EOF;
    the queue is emptied meanwhile so the thread cannot stay blocked on a full queue.
    Closing the pipe first would pull the descriptor from under a read in progress (a
    TypeError in the thread, or a read from whatever file reuses the number next)."""
    if worker.is_alive():
        worker.terminate()
    worker.join()
    while drain.is_alive():
        _empty(received)
        drain.join(timeout=0.01)
    receiver.close()
    _empty(received)


def _empty(received: queue.Queue) -> None:
    while True:
        try:
            received.get_nowait()
        except queue.Empty:
            return


def merged(chunks: Iterator[Chunk], records: int, lines: int) -> Iterator[Chunk]:
    """Consecutive chunks joined until they hold ``records`` rows or ``lines`` lines (so a
    commit every ``lines`` lines stays one): for a writer with a fixed cost per batch."""
    parts: list[Chunk] = []
    held_records = held_lines = 0
    for chunk in chunks:
        parts.append(chunk)
        held_records += len(chunk.normalised.rows)
        held_lines += chunk.lines
        if held_records >= records or held_lines >= lines:
            yield Chunk.joined(parts)
            parts, held_records, held_lines = [], 0, 0
    if parts:
        yield Chunk.joined(parts)


def source_chunks(source: Source, offset: int, first_line: int, parse: Parse = parse_batch, *,
                  document: bool = False, quoted: bool = False, in_order: bool = False,
                  head_start: HeadStart | None = None) -> Iterator[Chunk]:
    """Workers for a large file on a machine with a spare core; this process otherwise.
    A plain file is cut into segments for several workers; gzip is one stream for one.
    ``parse`` reads the lines of the source's format (llm-council's by default); a
    ``document`` format's reader reads the file as one JSON value, in this process; a ``quoted``
    one (CSV) has rows that may run over several lines; an ``in_order`` one (a run log, whose
    first line says what the rest are) is read start to end by one reader: one worker for a
    large file, so that reading overlaps writing as for gzip (in this process it took the
    writer's turn: an OpenAI evals log imported at 8,000 records/s). ``head_start``: workers
    already reading the file from its start (HeadStart), taken when the import starts there."""
    early = None if head_start is None else head_start.chunks(offset, first_line)
    if early is not None:
        return early
    cores = os.cpu_count() or 1
    large = _in_segments(source, offset)
    if in_order and large:
        return chunks_in_workers(source, [Segment(offset, None, False)], first_line, 1, parse)
    if document or in_order:
        return document_chunks(source, offset, first_line, parse)  # type: ignore[arg-type]
    if source.kind == "stdin" or cores < 2 or (source.size or 0) - offset < PARALLEL_MIN_BYTES:
        return chunks(source, offset, first_line, parse, quoted=quoted)
    if source.kind == "gzip":
        return chunks_in_workers(source, [Segment(0, None, True, quoted)], first_line, 1, parse)
    parts = segments(source, offset, source.size, quoted)
    return chunks_in_workers(source, parts, first_line, min(MAX_WORKERS, cores), parse)


def _in_segments(source: Source, offset: int) -> bool:
    """Whether source_chunks cuts a line format's file into segments for several workers."""
    return (source.kind == "file" and (os.cpu_count() or 1) >= 2
            and (source.size or 0) - offset >= PARALLEL_MIN_BYTES)
