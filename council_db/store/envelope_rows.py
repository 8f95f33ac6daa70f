"""A batch's envelopes as the database keeps them: a session's in its ``sessions`` row, and
a record's own, where it differs from its session's (a judge log gives every grading its own
time), as a ``record_envelopes`` row named by its digest (contract.envelope)."""

from __future__ import annotations

from functools import lru_cache
from operator import attrgetter
from typing import Sequence

import numpy as np

from council_db.contract.envelope import Envelope
from council_db.contract.score_batch import ENVELOPE_TIME, ScoreBatch, coded
from council_db.contract.timestamps import time_text
from council_db.store.key_hash import key_hashes

ENVELOPE_COLUMNS = ("timestamp", "ts_us", "consent_level", "schema_version", "schema_version_raw",
                    "council_config_version", "query_hash", "query_metadata")
# A sessions row: its key, its envelope's columns and what the envelope tells of the query
SESSION_COLUMNS = ("session_key", *ENVELOPE_COLUMNS, "category", "language", "length_bucket", "import_id", "key_hash")
_SESSION_FIELDS = attrgetter(*ENVELOPE_COLUMNS, "category", "language", "length_bucket")


def envelope_values(envelope: Envelope) -> tuple:
    """The envelope's ENVELOPE_COLUMNS."""
    return (envelope.timestamp, envelope.ts_us, envelope.consent_level, envelope.schema_version,
            envelope.schema_version_raw, envelope.council_config_version, envelope.query_hash,
            envelope.query_metadata)


def session_columns(reserved: list[int], first_seen: dict[str, Envelope], import_id: int | None) -> list[list]:
    """New ``sessions`` rows (id, SESSION_COLUMNS) under the reserved ids, a list a column. An
    envelope's columns are read once however many sessions share it (a judge log's sessions
    share a few: fastchat-review's 100,000 sessions in 200,000 records, 27 envelopes a batch),
    and spread to its sessions by numpy."""
    envelopes = list(first_seen.values())
    distinct = dict(zip(map(id, envelopes), envelopes))
    number = {key: position for position, key in enumerate(distinct)}
    codes = np.fromiter(map(number.__getitem__, map(id, envelopes)), dtype=np.intp, count=len(envelopes))
    table = np.empty((len(distinct), len(ENVELOPE_COLUMNS) + 3), dtype=object)
    table[:] = [_SESSION_FIELDS(envelope) for envelope in distinct.values()]
    keys = list(first_seen)
    return [reserved, keys, *(column.tolist() for column in table[codes].T), [import_id] * len(keys),
            key_hashes(keys)]


def stored_envelope(columns: Sequence) -> tuple:
    """ENVELOPE_COLUMNS as read back, in the order of ``Envelope.stored`` (ts_us left out)."""
    timestamp, _ts_us, consent, version, version_raw, config, query_hash, metadata = columns
    return (timestamp, consent, version, version_raw, config, query_hash, metadata)


def own_envelopes(batch: ScoreBatch, stored: list[tuple],
                  session_times: list[int | None]) -> tuple[list[Envelope], np.ndarray | None, np.ndarray | None]:
    """What each row keeps of its envelope beside its session's (``stored`` and
    ``session_times``, per session of the batch): the distinct envelopes rows need a
    ``record_envelopes`` row for; per row, the index of its own among them (-1: none), and its
    own time for ``scores.ts_us`` (0: its session's), each None when no row has one.

    A row whose envelope differs from its session's only in its time keeps just that time:
    its text is the session's form of the number (Envelope.with_time), so export gives back
    the same line. A judge log's gradings all differ so: a number each, not an envelope row
    each (12 us a record in the writer, and the reader's envelope objects it unpickled)."""
    _, first_rows, inverse = np.unique(batch.session.astype(np.int64) * len(batch.envelopes) + batch.envelope,
                                       return_index=True, return_inverse=True)
    pair = inverse.ravel()
    session, code = batch.session[first_rows], batch.envelope[first_rows]  # per pair
    its_own = _plain_pairs(batch, pair, len(first_rows))
    envelopes = batch.envelopes
    rest = _codes([envelope.stored[1:] for envelope in envelopes], [columns[1:] for columns in stored])
    text = _codes([envelope.stored[0] for envelope in envelopes], [columns[0] for columns in stored])
    form = _codes([envelope.timestamp[10:11] for envelope in envelopes], [columns[0][10:11] for columns in stored])
    same_rest, same_text = rest[0][code] == rest[1][session], text[0][code] == text[1][session]
    timed = same_rest & (form[0][code] == form[1][session])  # a time is all that may differ
    asks = its_own & timed & ~same_text  # its rows may keep their envelope's time as a number
    own_time = np.zeros(len(envelopes), dtype=np.int64)  # per envelope asked: its time, if its text is its form
    for number in np.unique(code[asks]).tolist():
        own_time[number] = envelopes[number].own_time(envelopes[number].timestamp) or 0
    pair_time = np.where(asks, own_time[code], 0)
    needs = (its_own & ~(same_rest & (same_text | (pair_time != 0))))[pair]
    times = pair_time[pair]
    row_own = np.full(len(batch), -1, dtype=np.int64)
    own = _Distinct()
    if batch.times is not None:  # rows with a time of their own: a number where that is all that differs
        rows = np.flatnonzero(batch.times != ENVELOPE_TIME)
        needs[rows], times[rows] = False, 0
        by_number = timed_rows = rows[timed[pair[rows]]]
        canonical = _canonical(stored, session_times)[batch.session[by_number]]
        times[by_number] = np.where(batch.times[by_number] == canonical, 0, batch.times[by_number])
        for row in np.setdiff1d(rows, timed_rows).tolist():  # more than the time differs: rare
            row_own[row] = own.index(envelopes[batch.envelope[row]].with_time(int(batch.times[row])))
    pair_own = np.full(len(first_rows), -1, dtype=np.int64)
    for number in np.unique(pair[needs]).tolist():
        pair_own[number] = own.index(envelopes[code[number]])
    row_own[needs] = pair_own[pair[needs]]
    return own.envelopes, row_own if own.envelopes else None, times if times.any() else None


def _codes(envelopes: list, sessions: list) -> tuple[np.ndarray, np.ndarray]:
    """The values of the batch's envelopes and of its sessions' stored envelopes as numbers,
    equal where the values are: a pair's compare is then one of integers (a run log's batch
    holds a pair of session and envelope a record: comparing them one by one was 5 us a record)."""
    _, numbers = coded(envelopes + sessions)
    return numbers[:len(envelopes)], numbers[len(envelopes):]


def _plain_pairs(batch: ScoreBatch, pair: np.ndarray, pairs: int) -> np.ndarray:
    """Per pair: whether any of its rows takes its time from the envelope (batch.times): only
    those need the envelope's own time (a judge log's rows each have theirs)."""
    if batch.times is None:
        return np.ones(pairs, dtype=bool)
    return np.isin(np.arange(pairs), pair[batch.times == ENVELOPE_TIME])


class _Distinct:
    """Envelopes numbered by their stored columns, each once."""

    def __init__(self) -> None:
        self.envelopes: list[Envelope] = []
        self._numbers: dict[tuple, int] = {}

    def index(self, envelope: Envelope) -> int:
        number = self._numbers.setdefault(envelope.stored, len(self.envelopes))
        if number == len(self.envelopes):
            self.envelopes.append(envelope)
        return number


def _canonical(stored: list[tuple], session_times: list[int | None]) -> np.ndarray:
    """Per session: its time where its text is that time's own form (Envelope.with_time), else 0."""
    return np.array([_canonical_time(envelope[0], time) for envelope, time in zip(stored, session_times)],
                    dtype=np.int64)


@lru_cache(maxsize=1 << 17)
def _canonical_time(text: str, time: int | None) -> int:
    """Cached: a judge log's sessions gain records in batch after batch (a run of OpenAI evals each)."""
    return time if time and time_text(time, text) == text else 0
