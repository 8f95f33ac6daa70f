"""A batch of an OpenAI evals log's lines taken in one tight pass (issue 30 item 7).

The reader decodes a batch's lines in one msgspec call (openai_evals.BatchEvent); what it cost
after that was Python a line: a stripped copy of each line, then a method call or three per
event. Here a batch whose lines are plainly one object each is handed to msgspec as it was
read, and each event is taken inline: a sampling event adds its answer's length to its
sample's, an event the import does not read costs a comparison, and only a metrics event
costs a call, which makes its grading tuple (openai_evals_columns). Any event these cannot
take is read the reader's line-by-line way at its place in the batch, having changed nothing
here, so what a batch gives is what reading its lines one at a time gives
(tests/ingest/test_openai_evals_batches.py).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Any, Protocol

import msgspec

from council_db.contract.envelope import written_us
from council_db.contract.fields import MAX_SCORE, LineError
from council_db.contract.record import ReadRecord
from council_db.ingest.formats.judge_lines import decoded_batch
from council_db.ingest.formats.openai_evals_run import Run
from council_db.ingest.lines import LineBatch, Parsed

INVALID = "__invalid__"  # classify_utils.INVALID_STR: the grader's answer named no choice
_FIELDS = {field.name: field.type for field in msgspec.inspect.type_info(ReadRecord).fields}
LENGTHS = next(kind for kind in _FIELDS["response_length_chars"].types if isinstance(kind, msgspec.inspect.IntType))


class RunReader(Protocol):
    """What ``taken`` reads and changes of the log's reader (openai_evals.Reader)."""

    run: Run | None  # the run of the spec line in force
    template: ReadRecord | None  # its record, checked once
    answers: dict[str, list[int | None]]  # sample_id -> its sampling events' answer lengths since its grading

    def score(self, data: Any) -> float:
        """The grading's score; LineError when only the record path can word what is wrong."""

    def read_line(self, number: int, raw: bytes, text: bytes, parsed: Parsed) -> None:
        """The line read on its own, the way that names what is wrong with it."""

def event_key(run_id: str, event_id: int) -> int:
    """A 31-bit digest of the event: the position that keeps two gradings of one sample apart.
    Blake2b of "run_id NUL event_id", its run's part hashed once (a hash a grading cost 2 us)."""
    digest = _run_digest(run_id).copy()
    digest.update(b"%d" % event_id)
    return int.from_bytes(digest.digest(), "little") & 0x7FFF_FFFF


@lru_cache(maxsize=64)
def _run_digest(run_id: str) -> Any:
    """The digest of a run's part of its events' keys, to be copied for each event."""
    return hashlib.blake2b(f"{run_id}\x00".encode("utf-8", "surrogatepass"), digest_size=4)


def answer_length(lengths: list[int | None] | None) -> int | None:
    """The graded answer's characters: the first of two or more sampling events' (the
    grader's is the last); None with one (only the grader sampled) or none."""
    return lengths[0] if lengths is not None and len(lengths) >= 2 else None


def completion_chars(sampled: Any) -> int | None:
    """The characters of a sampling event's first completion; None when it holds no text."""
    first = sampled[0] if isinstance(sampled, list) and sampled else sampled
    return len(first) if isinstance(first, str) else None


def decoded(decoder: msgspec.json.Decoder, batch: LineBatch
            ) -> tuple[range | list[int], list[bytes], list[bytes], list[Any]] | None:
    """The batch's line numbers, lines as read, texts and events (``decoder``'s:
    openai_evals.BatchEvent) as judge_lines.decoded_batch reads them; None when msgspec
    refuses a line (the reader's line-by-line way then says which)."""
    numbers, raws, texts, events = decoded_batch(decoder, batch)
    return None if events is None else (numbers, raws, texts, events)


def taken(reader: RunReader, numbers: list[int] | range, raws: list[bytes], texts: list[bytes],
          events: list[Any], parsed: Parsed) -> list[tuple]:
    """The batch's gradings (openai_evals_columns' tuples), each event taken as the reader's
    ``records`` would take it; an event only that can say what it is (a spec line, a
    problem, a value that needs the record's checks) is read there, in its place."""
    gradings: list[tuple] = []
    answers, run, run_id = reader.answers, reader.run, None if reader.run is None else reader.run.run_id
    for number, raw, text, event in zip(numbers, raws, texts, events):
        kind = event.type
        if run is not None and not event.spec:
            if event.final_report:
                continue
            if kind == "sampling" or kind == "metrics":
                sample, data = event.sample_id, event.data
                if event.run_id == run_id and sample is not None and data is not None:
                    if kind == "sampling":
                        answers.setdefault(sample, []).append(completion_chars(data.sampled))
                        continue
                    if data.choice == INVALID:  # no verdict: the sample's answers are done with, no record
                        answers.pop(sample, None)
                        parsed.no_verdict += 1
                        continue
                    if data.choice is not None and _graded(reader, number, event, sample, gradings):
                        continue
            elif kind is not None:
                continue  # an event the import does not read
        reader.read_line(number, raw, text, parsed)
        run = reader.run
        run_id = None if run is None else run.run_id
    return gradings


def _graded(reader: RunReader, number: int, event: Any, sample: str, gradings: list[tuple]) -> bool:
    """A metrics event's grading appended, its record what the reader's ``_graded`` makes and
    the contract checks; False, nothing changed, when it needs those checks' words."""
    template, time, run = reader.template, event.created_at, reader.run
    if template is None or run is None or event.event_id is None or not time or not sample.isascii() or (
            "\x00" in sample):
        return False
    ts_us = written_us(time)  # read once; None (no time, or one as time_text would not write it): _graded's
    if ts_us is None:
        return False
    try:
        score = reader.score(event.data)
    except LineError:
        return False
    length = answer_length(reader.answers.get(sample))
    if not -MAX_SCORE <= score <= MAX_SCORE or length is not None and length > LENGTHS.le:
        return False
    reader.answers.pop(sample, None)
    gradings.append((number, run, template, sample, time, ts_us, score, event_key(run.run_id, event.event_id),
                     length))
    return True
