"""OpenAI evals run logs of model-graded evals: ``oaieval ... --record_path LOG.jsonl``.

What oaieval's LocalRecorder writes (openai/evals, evals/record.py): a first line
``{"spec": ...}`` (formats/openai_evals_run.py: the completion fn graded, the grader, the
grading prompt), then one line per event, {run_id, event_id, sample_id, type, data,
created_by, created_at}, in event_id order with the samples' events interleaved (samples run
in threads), and at the end ``{"final_report": ...}``. ModelBasedClassify
(evals/elsuite/modelgraded/classify.py) records, per sample: the candidate's "sampling"
event (data.sampled: its completions), the grader's "sampling" event, then one "metrics"
event (data.choice: the grader's choice, or "__invalid__" when none could be read; data.score:
the choice's score from the spec's choice_scores, null when it has none).

What a metrics event becomes: one record.
- session: the sample_id (``fact.dev.3``): every run's grading of that sample is compared in it.
- candidate: the first completion fn; reviewer: the grader (the last; the candidate itself
  when only one was given); reviewer_prompt: the modelgraded spec (``/eval_type`` when the
  eval sets one); reviewer_temperature and reviewer_seed: the eval's eval_kwargs, when given.
- score: data.score, on "0-1" (every registry spec's choice_scores lie in [0, 1]), or on
  ``--scale``; a choice without a score: "Y"/"Yes" 1 and "N"/"No" 0. A score off 0-1, or a
  number choice scored as itself (choice_scores: from_strings, a 1-5 Likert), needs --scale.
- "__invalid__" (the grader's answer held no choice; evals scores it as the lowest): no
  record, counted as a judgment without a verdict, never as a wrong answer.
- length: the characters of the candidate's completion, the first of the sample's sampling
  events since its last metrics event when there are two or more (the grader's is the last);
  unknown when there is one (the completion came with the sample, only the grader sampled).
- position: no display slot, a 31-bit digest of run_id and event_id: several metrics events
  of one sample (a grader run again, concatenated logs) are several records, and importing
  a log again stores nothing twice. timestamp: created_at; category: the eval's base name.

A log is read in order by one reader (options.RUN_LOGS; one worker process for a large file,
while this one writes): its first line says whose run it is, and a sample's answer and
grading are on different lines. Other events (match, raw_sample,
error ...) and the final report are not read. A batch's gradings are handed on as columns
(openai_evals_columns), or a record each where a line of it was read the line-by-line way.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Union

import msgspec

from council_db.contract.fields import LineError
from council_db.contract.record import ReadRecord, checked_record
from council_db.contract.storable import unstorable_field
from council_db.contract.timestamps import timestamp_us
from council_db.errors import CouncilDbError
from council_db.ingest.formats.judge_lines import (
    BOM,
    LineReader,
    Name,
    ParsedColumns,
    Values,
)
from council_db.ingest.formats.openai_evals_batch import (
    INVALID,
    answer_length,
    completion_chars,
    decoded,
    event_key,
    taken,
)
from council_db.ingest.formats.openai_evals_columns import graded_columns, graded_records
from council_db.ingest.formats.openai_evals_run import NotGraded, Run, run_of
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.head import head
from council_db.ingest.lines import LineBatch, Parsed
from council_db.ingest.sources import Source

SCALE = "0-1"
NOT_A_SLOT = "1.0.0"  # the schema whose position is no display slot
YES_NO = {"Y": 1.0, "Yes": 1.0, "N": 0.0, "No": 0.0}  # choices scored where the spec gives no choice_scores
NO_SPEC = ('is no spec line: an OpenAI evals log (oaieval --record_path) starts with {"spec": ...}, which names '
           "the completion fns and the eval; give the whole log")


class Event(msgspec.Struct):
    """One line of the log: the spec, an event, or the final report."""

    spec: msgspec.Raw = msgspec.Raw()
    final_report: msgspec.Raw = msgspec.Raw()
    run_id: Union[str, None] = None
    event_id: Union[int, None] = None
    sample_id: Union[Name, None] = None
    type: Union[str, None] = None
    data: msgspec.Raw = msgspec.Raw()
    created_at: Union[str, None] = None


class Sampling(msgspec.Struct):
    sampled: Any = None  # a completion fn's completions: a list of strings, or one string


class Metrics(msgspec.Struct):
    choice: str
    score: Union[float, None] = None


class EventData(msgspec.Struct, gc=False):
    """What the import reads of any event's data (a sampling's or a metrics'), decoded with
    its line: a data field of another type sends the batch the line-by-line way."""

    sampled: Any = None
    choice: Union[str, None] = None
    score: Union[float, None] = None


class BatchEvent(Event, gc=False):
    """``Event`` with its data decoded in the same pass: a batch's lines in one call, where
    decoding each event's data again cost 1-2 us a line."""

    data: Union[EventData, None] = None  # type: ignore[assignment]


_SAMPLING, _METRICS = msgspec.json.Decoder(Sampling), msgspec.json.Decoder(Metrics)
_EVENTS = msgspec.json.Decoder(BatchEvent)


class Reader(LineReader):
    FORMAT = "an OpenAI evals log"
    line_type = Event
    MADE_FROM = {"session_id": "sample_id", "timestamp": "created_at",
                 "reviewer_id": "spec.completion_fns (the last)", "model_id": "spec.completion_fns (the first)",
                 "reviewer_prompt": "spec.run_config.eval_spec.args.modelgraded_spec",
                 "reviewer_temperature": "spec.run_config.eval_spec.args.eval_kwargs.temperature",
                 "reviewer_seed": "spec.run_config.eval_spec.args.eval_kwargs.seed"}
    EXPECTED = {
        "spec": "oaieval's run spec, an object",
        "final_report": "the run's final report",
        "run_id": "the run's id, a string",
        "event_id": "the event's number in its run, an integer",
        "sample_id": "the sample's id (a non-empty string), e.g. fact.dev.3",
        "type": "the event's type, a string (sampling, metrics, match, ...)",
        "data": "the event's data, an object",
        "created_at": "the time the event was recorded, a string",
        "choice": "the grader's choice, a string (__invalid__ when it named none)",
        "score": "the choice's score, a number, or null",
        "sampled": "the completions, a list of strings",
    }

    @classmethod
    def required_fields(cls) -> tuple[str, ...]:
        """A log's first line, by which the sniffer knows one."""
        return ("spec",)

    @classmethod
    def check_source(cls, options: FormatOptions, source: Source) -> None:
        """Refuse a log that does not start with a model-graded run's spec line, before the
        database is opened (a first line cut off by the sample is judged by the reader)."""
        sample = head(source)
        if not sample or b"\n" not in sample:
            return
        first = sample.split(b"\n", 1)[0].strip(b" \t\r").removeprefix(BOM)
        try:
            spec = msgspec.json.decode(first, type=Event).spec
        except (msgspec.ValidationError, msgspec.DecodeError):
            spec = msgspec.Raw()
        if not spec:
            raise CouncilDbError(f"{source.name}: line 1 {NO_SPEC}; nothing was imported")
        try:
            run_of(spec)
        except (LineError, NotGraded) as error:
            raise CouncilDbError(f"{source.name}: line 1: {error}; nothing was imported") from None

    def __init__(self, options: FormatOptions, source: Source):
        super().__init__()
        self.name = source.name
        self.scale = options.scale
        self.run: Run | None = None
        self.answers: dict[str, list[int | None]] = {}  # sample_id -> its sampling events' lengths since its grading
        self.line = 0
        self.template: ReadRecord | None = None  # the run's record, checked once; None: each record checked

    def __call__(self, batch: LineBatch) -> Parsed:
        """A batch's lines decoded in one call with their events' data, and each usual event
        taken in one pass (openai_evals_batch); any other line goes through ``records`` line by
        line, as a batch msgspec refuses does (LineReader), which names what is wrong. The
        gradings are columns when no record came the other way (openai_evals_columns), else a
        record each."""
        found = decoded(_EVENTS, batch)
        if found is None:
            return super().__call__(batch)
        parsed = Parsed()
        gradings = taken(self, *found, parsed)
        columns = None if parsed.records or not gradings else graded_columns(gradings, NOT_A_SLOT,
                                                                                  self.scale or SCALE)
        if columns is not None:
            return ParsedColumns(rejected=parsed.rejected, no_verdict=parsed.no_verdict, columns=columns)
        parsed.records = sorted(parsed.records + graded_records(gradings), key=itemgetter(0))
        return parsed

    def read_line(self, number: int, raw: bytes, text: bytes, parsed: Parsed) -> None:
        """The line read on its own (LineReader's way), which names what is wrong with it."""
        self._read(number, raw, text, parsed)

    def line_records(self, number: int, line: Event) -> tuple[list[Values], int]:
        self.line = number
        return self.records(line)

    def records(self, line: Event) -> tuple[list[Values], int]:
        if line.spec:
            self._start(line.spec)
            return [], 0
        if self.run is None:
            raise CouncilDbError(f"{self.name}: line {self.line} {NO_SPEC}; nothing was imported")
        if line.final_report:
            return [], 0
        if line.type is None:
            raise LineError("type", "missing; expected an event's type (sampling, metrics, ...), or a spec or "
                                    "final_report line")
        if line.type not in ("sampling", "metrics"):
            return [], 0
        sample = self._sample_of(line)
        if line.type == "sampling":
            self.answers.setdefault(sample, []).append(completion_chars(self._data(line, _SAMPLING).sampled))
            return [], 0
        return self._graded(line, sample, self._data(line, _METRICS))

    def _start(self, spec: bytes) -> None:
        """A spec line: the run the events below it belong to. The first one must be usable:
        without it no event says whose answer was graded."""
        try:
            self.run = run_of(spec)
            self.template = self._run_record(self.run)
        except NotGraded as error:
            raise CouncilDbError(f"{self.name}: line {self.line}: {error}; nothing was imported") from None
        except LineError as error:
            if self.run is None:
                raise CouncilDbError(f"{self.name}: line {self.line}: {error}; nothing was imported") from None
            raise
        self.answers.clear()

    def _sample_of(self, line: Event) -> str:
        """The event's sample, held to belong to the run of the spec line above it."""
        assert self.run is not None
        if line.run_id != self.run.run_id:
            raise LineError("run_id", "not the run_id of the spec line above it; expected the events of that run "
                                      "(logs joined with cat keep each run's spec line first)")
        if line.sample_id is None:
            raise LineError("sample_id", f"missing; expected {self.EXPECTED['sample_id']}")
        return line.sample_id

    def _data(self, line: Event, decoder: msgspec.json.Decoder) -> Any:
        """The event's data as ``decoder``'s struct; LineError naming ``data.<field>``."""
        try:
            return decoder.decode(line.data or b"null")
        except msgspec.DecodeError as error:  # a ValidationError is a DecodeError too
            explained = self._explain(error)
            if explained.field is None or "not a JSON object" in explained.problem:
                raise LineError("data", f"not an object; expected {self.EXPECTED['data']}") from None
            raise LineError(f"data.{explained.field}", explained.problem) from None

    def _graded(self, line: Event, sample: str, metrics: Metrics) -> tuple[list[Values], int]:
        """A metrics event's record; none for an invalid choice."""
        assert self.run is not None
        pending = self.answers.pop(sample, None)
        if metrics.choice == INVALID:
            return [], 1
        if line.event_id is None:
            raise LineError("event_id", f"missing; expected {self.EXPECTED['event_id']}")
        run, time = self.run, line.created_at or ""
        try:
            timestamp_us(time)
        except LineError as error:
            raise LineError("created_at", error.problem) from None
        return [self._values(run, sample, time, event_key(run.run_id, line.event_id),
                             answer_length(pending), self.score(metrics))], 0

    def _values(self, run: Run, sample: str, time: str, position: int, length: int | None,
                score: float) -> Values:
        """A grading's record fields: the run's, and the event's own."""
        return dict(
            schema_version=NOT_A_SLOT, session_id=sample, timestamp=time, reviewer_id=run.grader,
            model_id=run.candidate, position=position, response_length_chars=length, score_value=score,
            score_scale=self.scale or SCALE, query_metadata={"category": run.category},
            reviewer_prompt=run.prompt, reviewer_temperature=run.temperature, reviewer_seed=run.seed)

    def _run_record(self, run: Run) -> ReadRecord | None:
        """A record of the run's with placeholders for the event's own fields, when what the
        run gives every record passes the contract's checks (then an event's record needs only
        its own fields checked); None when they refuse it, so that each record is checked and
        rejected in the checks' words."""
        try:
            record = checked_record(self._values(run, "-", "", 0, None, 0.0))
        except msgspec.ValidationError:
            return None
        return None if unstorable_field(record) else record

    def score(self, metrics: Metrics | EventData) -> float:
        """The choice's score: the spec's, else the documented one; LineError when only --scale
        can say what scale it is on."""
        choice, score = metrics.choice, metrics.score
        number = _number(choice)
        if score is None:
            score = YES_NO.get(choice, number)
        if score is None:
            raise LineError("data.score", f"null, and the choice ({len(choice):,} characters) is none of Y, Yes, N, "
                                          "No or a number; expected the choice's score, from the modelgraded spec's "
                                          "choice_scores")
        if self.scale is None and (score == number or not 0.0 <= score <= 1.0):
            raise LineError("data.score", f"{score!r} is the choice itself (choice_scores: from_strings) or off 0-1; "
                                          "give --scale LOW-HIGH, the range of the modelgraded spec's choice scores "
                                          "(e.g. --scale 1-5 for the choices 1 to 5)")
        return score


def _number(choice: str) -> float | None:
    """A choice that is a number (a Likert spec's "1" ... "5"), as that number."""
    return float(choice) if choice.isdecimal() else None

