"""An OpenAI evals log's usual gradings made columns (contract/record_columns), as the judge
formats' batches are: each run's judge, candidate and category once, the rest a column at a
time, and each grading's time read once into microseconds, so that the normaliser decides a
batch's envelopes at once instead of a record at a time (a record each, then its envelope
looked up by its own time, cost the reading process about 20 us a record).

A grading, as the reader took it: (its line's number, its Run, the run's checked record, the
sample, created_at, its UTC microseconds (whose text time_text writes as created_at), the
score, the position, the answer's length or None), every value already held to the record's
limits (openai_evals.Reader._usual_grading).
"""

from __future__ import annotations

from operator import itemgetter

import msgspec
import numpy as np

from council_db.contract.record import ReadRecord
from council_db.contract.record_columns import RecordColumns
from council_db.contract.score_batch import coded
from council_db.ingest.formats.judge_columns import length_column, recoded

_SEPARATOR = itemgetter(10)  # of a date and time: " " as str(datetime) writes it, "T" as isoformat()


def graded_columns(gradings: list[tuple], schema_version: str, scale: str) -> RecordColumns | None:
    """The gradings as columns; None where the batch's times differ in form (" " and "T"):
    each grading is then a record, keeping its text."""
    numbers, runs, _, samples, times, ts_us, scores, positions, lengths = zip(*gradings)
    if len(set(map(_SEPARATOR, times))) > 1:
        return None
    run_ids, run = coded(list(map(id, runs)))
    by_id = dict(zip(map(id, runs), runs))
    distinct = [by_id[key] for key in run_ids]
    judges, judge = recoded([(r.grader, r.prompt, r.temperature, r.seed) for r in distinct], run)
    models, model = recoded([r.candidate for r in distinct], run)
    categories, category = recoded([r.category for r in distinct], run)
    keys, session = coded(samples)
    return RecordColumns(np.array(numbers), keys, session, judges, judge, models, model,
                         np.array(positions, dtype=np.int32), length_column(lengths, len(gradings)),
                         np.array(scores, dtype=np.float64), schema_version, scale, np.array(ts_us, dtype=np.int64),
                         categories, category, time_like=times[0])


def graded_records(gradings: list[tuple]) -> list[tuple[int, ReadRecord]]:
    """Each grading as its record: its run's checked one with the grading's own fields."""
    return [(number, msgspec.structs.replace(template, session_id=sample, timestamp=time, score_value=score,
                                             position=position, response_length_chars=length))
            for number, _, template, sample, time, _, score, position, length in gradings]
