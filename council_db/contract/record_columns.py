"""A batch of a judge log's records as columns, each repeated value once: what a reader hands
the normaliser (ingest/normalise.py) in place of a record struct each (record.ReadRecord).

A judge log's line costs its reader one decoded struct; making a record of it, checking it,
and reading it back field by field cost fastchat-single more than decoding its 1.5 KB line.
A reader that makes columns holds them to the record's limits itself, a distinct value once
(names, session keys, categories) and numbers a column at a time, and makes none when any
value of the batch falls outside them, so that the record path says which line and field.

What the columns can say is what the judge formats give: every record has llm-council's
default consent and no config version or query hash; its metadata is a category or none;
its time UTC microseconds (``times``) or none for an undated batch (an empty timestamp), its
text written as FastChat's isoformat() writes it, or like ``time_like`` (OpenAI evals'
str(datetime)); its judge a model with a prompt, and a temperature and seed where a log
gives them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from council_db.contract.fields import DEFAULT_CONSENT, UNKNOWN_LENGTH
from council_db.contract.record import ReadRecord
from council_db.contract.timestamps import time_text


@dataclass
class RecordColumns:
    """Per record (one row each): its line, session, judge, model, slot or key, length and
    score; the distinct values beside. Codes index their distinct list, in order of first
    appearance (as contract/score_batch numbers them)."""

    numbers: np.ndarray  # per record: its line's number
    session_keys: list[str]  # distinct, each within the record's limits and storable
    session: np.ndarray
    judges: list[tuple]  # distinct (reviewer_id, reviewer_prompt), or those and reviewer_temperature, reviewer_seed
    judge: np.ndarray
    models: list[str]
    model: np.ndarray
    position: np.ndarray  # int32: a display slot (<= fields.MAX_SLOT) when schema_version has them, else a key
    length: np.ndarray  # int32, fields.UNKNOWN_LENGTH where unknown
    score: np.ndarray  # float64, within the record's bounds
    schema_version: str
    score_scale: str
    times: np.ndarray | None = None  # int64 UTC microseconds; None: undated (timestamp "")
    categories: list[str | None] | None = None  # distinct query_metadata categories (None: no metadata)
    category: np.ndarray | None = None  # per record; None: no record has metadata
    position_given: np.ndarray | None = None  # per record: False where none (position: DEFAULT_POSITION); None: all
    reviewer_kinds: dict[str, str] = field(default_factory=dict)  # reviewer_id -> the kind its records state
    time_like: str = ""  # a time in the form the times' text takes (timestamps.time_text); "": a number each

    def __len__(self) -> int:
        return len(self.session)

    def time(self, row: int) -> int | str:
        """The record's timestamp as its record would hold it (record.ReadRecord)."""
        if self.times is None:
            return ""
        return time_text(int(self.times[row]), self.time_like) if self.time_like else int(self.times[row])

    def metadata(self, row: int) -> dict[str, str] | None:
        """The record's query_metadata."""
        if self.category is None or self.categories is None:
            return None
        found = self.categories[int(self.category[row])]
        return None if found is None else {"category": found}

    def position_of(self, row: int) -> int | None:
        given = self.position_given is None or bool(self.position_given[row])
        return int(self.position[row]) if given else None

    def length_of(self, row: int) -> int | None:
        length = int(self.length[row])
        return None if length == UNKNOWN_LENGTH else length

    def record(self, row: int) -> ReadRecord:
        """One row as the record a reader would have made (for the envelope of a session's first
        record; the normaliser makes a few a batch)."""
        reviewer, prompt, temperature, seed = (*self.judges[int(self.judge[row])], None, None)[:4]
        return ReadRecord(schema_version=self.schema_version, session_id=self.session_keys[int(self.session[row])],
                          timestamp=self.time(row), consent_level=DEFAULT_CONSENT, reviewer_id=reviewer,
                          reviewer_prompt=prompt, reviewer_temperature=temperature, reviewer_seed=seed,
                          model_id=self.models[int(self.model[row])],
                          position=self.position_of(row), response_length_chars=self.length_of(row),
                          reviewer_kind=self.reviewer_kinds.get(reviewer),
                          score_value=float(self.score[row]), score_scale=self.score_scale,
                          query_metadata=self.metadata(row))
