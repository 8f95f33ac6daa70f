"""UK AISI Inspect's eval logs (``.json`` and ``.eval``): each sample's model-graded scores.

What a sample becomes (docs/import-formats.md, ``inspect``): one session, ``<eval.task>/<sample
id>``, so every run of the task meets the same samples, and every grader of one sample (a
panel) judges in it. Each model-graded score (inspect_grades) is a record: the candidate is the
model under test (``eval.model``), the reviewer the grader model, with its prompt (the scorer's
name, or a digest of its template) and its sampling settings where the log has them. The
answer's length is that of ``output.completion``, else of the first choice's message. An
answer has no display slot: the position is a key made from the eval's id, the scorer and the
epoch, so the epochs of a sample are repeated gradings (test-retest), two scorers graded by one
model are two records, and importing a log again stores nothing twice. The time is the score
event's, else the sample's, else the eval's ``created``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Iterator, Union

import msgspec

from council_db.contract.fields import LineError
from council_db.ingest.formats import inspect_grades as grades
from council_db.ingest.formats.inspect_files import LogFile, check_archive, check_file, is_eval_archive, open_log
from council_db.ingest.formats.judge_lines import LineReader, NotJson, Values
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.formats.row_values import plain
from council_db.ingest.formats.table_rows import inferred_scale
from council_db.ingest.lines import LineBatch, Parsed
from council_db.ingest.rejected import from_line_error
from council_db.ingest.sources import Source

NOT_A_SLOT = "1.0.0"  # the schema whose position is no display slot: a key of repeated gradings
LOOK_AHEAD = 200  # the first samples looked at before reading: their numbers' scale, whether any is graded
# Inspect writes a NaN or infinite score as a bare word, which is no JSON: read as null (a grade not given)
_NOT_FINITE = re.compile(rb"(?<=[:\[,\s])-?(?:NaN|Infinity)(?=\s*[,\]}])")


class Score(msgspec.Struct):
    value: Any = None
    explanation: Union[str, None] = None


class Message(msgspec.Struct):
    content: Any = None


class Choice(msgspec.Struct):
    message: Union[Message, None] = None


class Output(msgspec.Struct):
    completion: Union[str, None] = None
    choices: Union[list[Choice], None] = None


class Sample(msgspec.Struct):
    id: Union[int, str]
    epoch: int = 1
    output: Union[Output, None] = None
    scores: Union[dict[str, Score], None] = None
    events: Union[list[grades.Event], None] = None
    started_at: Union[str, None] = None
    completed_at: Union[str, None] = None


class Reader(LineReader):
    FORMAT = "Inspect's eval log"
    line_type = Sample
    MADE_FROM = {"session_id": "<eval.task>/<id>", "reviewer_id": "the grader model",
                 "model_id": "eval.model", "score_value": "scores", "timestamp": "the score event's timestamp",
                 "reviewer_prompt": "the scorer", "score_dimensions": "scores"}
    EXPECTED = {
        "id": "the sample's id (a number or a string)",
        "epoch": "the epoch, a whole number",
        "output": "the model's output, an object",
        "scores": "the scores by scorer, an object",
        "events": "the sample's transcript, a list of events",
        "started_at": "an ISO-8601 time",
        "completed_at": "an ISO-8601 time",
    }

    @classmethod
    def check_source(cls, options: FormatOptions, source: Source) -> None:
        """A log is a file; a ZIP archive must be a readable Inspect ``.eval`` (a ``.json`` is
        judged by its start (ingest/sniff), then when read)."""
        check_file(source)
        if is_eval_archive(source):
            check_archive(source)

    @classmethod
    def required_fields(cls) -> tuple[str, ...]:
        """A log's own top-level fields (a line of samples is no log)."""
        return ("version", "eval")

    def __init__(self, options: FormatOptions, source: Source):
        super().__init__()
        self.log: LogFile = open_log(source)
        self.spec = self.log.spec
        self.run = self.spec.eval_id or self.spec.run_id or self.spec.created or ""
        self.warnings: list[str] = []
        self.configured: dict[str, grades.Grader] = {}  # by scorer: what the eval's spec says of its grader
        self.scale = self._look_ahead(options.scale)

    def batches(self) -> Iterator[LineBatch]:
        """The log's samples in batches (ingest/pipeline.document_chunks reads them)."""
        return self.log.batches()

    def end(self) -> Parsed:
        """Nothing is left when the samples end; the archive is closed."""
        self.log.close()
        return Parsed()

    def __call__(self, batch: LineBatch) -> Parsed:
        parsed = Parsed()
        for number, raw in enumerate(batch.lines, start=batch.first_line):
            if number in self.log.broken:
                parsed.rejected.append(from_line_error(number, raw, self.log.broken[number]))
            elif raw:
                self._read(number, raw, raw, parsed)
        return parsed

    def _decoded(self, text: bytes) -> Any:
        if b"NaN" in text or b"Infinity" in text:
            text = _NOT_FINITE.sub(b"null", text)
        return super()._decoded(text)

    def records(self, line: Sample) -> tuple[list[Values], int]:
        if not line.scores:
            return [], 1  # a sample that errored before it was scored
        spans = grades.scorer_spans(line.events or [])
        session = f"{self.spec.task}/{line.id}"
        length = _length(line.output)
        made, silent = [], 0
        for name, score in line.scores.items():
            graded_by = self._grader(name, spans)
            if graded_by is None:
                continue
            grade = self._grade(name, score)
            if grade is None:
                silent += 1
                continue
            made.append(dict(
                schema_version=NOT_A_SLOT, session_id=session, reviewer_id=graded_by.model, model_id=self.spec.model,
                timestamp=graded_by.time or line.completed_at or line.started_at or self.spec.created or "",
                position=_key(self.run, name, line.epoch), response_length_chars=length, score_value=grade.value,
                score_scale=grade.scale, score_dimensions=grade.dimensions, reviewer_prompt=graded_by.prompt,
                reviewer_temperature=graded_by.temperature, reviewer_seed=graded_by.seed))
        return made, silent

    def _grader(self, name: str, spans: dict) -> Union[grades.Grader, None]:
        if name not in self.configured:
            self.configured[name] = grades.configured(self.spec, name)
        return grades.grader(self.configured[name], *spans.get(name, ([], None)))

    def _grade(self, name: str, score: Score) -> Union[grades.Grade, None]:
        if grades.failed(score.value, score.explanation):
            return grades.unscored(score.value, self.scale)
        return grades.grade(f"scores.{name}.value", score.value, self.scale)

    def _look_ahead(self, scale: Union[str, None]) -> Union[str, None]:
        """The first samples' scores: the scale of their numbers (when --scale is not given), and
        a warning when none is model-graded (only a grader model's scores are imported)."""
        numbers, graded, other = [], 0, set()
        for _, sample in zip(range(LOOK_AHEAD), self._first_samples()):
            spans = grades.scorer_spans(sample.events or [])
            for name, score in (sample.scores or {}).items():
                if self._grader(name, spans) is None:
                    other.add(name)
                    continue
                graded += 1
                if not grades.failed(score.value, score.explanation):
                    numbers += grades.numbers(score.value)
        self.log.broken.clear()  # found again when the samples are read
        if other and not graded:
            self.warnings.append(f"no score of the first samples (up to {LOOK_AHEAD}) was given by a grader model "
                                 f"(scorers {', '.join(sorted(other)[:10])}): only model-graded scores are imported "
                                 "(docs/import-formats.md, inspect)")
        if scale is not None or not numbers:
            return scale
        scale = inferred_scale(min(numbers), max(numbers))
        self.warnings.append(f"no --scale: the numeric scores of the first samples (up to {LOOK_AHEAD}) lie in "
                             f"{plain(min(numbers))}..{plain(max(numbers))}, so their scale is taken as {scale} (a "
                             "score outside it is kept but left out of analyses); give --scale LOW-HIGH to set it")
        return scale

    def _first_samples(self) -> Iterator[Sample]:
        """The log's samples that decode, from its start (bad ones are rejected when read)."""
        for _, text in self.log.samples():
            try:
                yield self._decoded(text)
            except (LineError, NotJson):
                continue


def _key(run: str, scorer: str, epoch: int) -> int:
    """A 31-bit digest of the eval, the scorer and the epoch: the position that keeps gradings apart."""
    digest = hashlib.blake2b(f"{run}/{scorer}/{epoch}".encode("utf-8", "surrogatepass"), digest_size=4).digest()
    return int.from_bytes(digest, "little") & 0x7FFF_FFFF


def _length(output: Union[Output, None]) -> Union[int, None]:
    """The answer's characters: its completion, else its first choice's text; None when unknown."""
    if output is None:
        return None
    if output.completion is not None:
        return len(output.completion)
    message = output.choices[0].message if output.choices else None
    content = message.content if message is not None else None
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        texts = [part.get("text") for part in content if isinstance(part, dict) and part.get("type") == "text"]
        return sum(len(text) for text in texts if isinstance(text, str))
    return None

