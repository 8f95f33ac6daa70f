"""Each session's usable records packed into one byte string per part (revision 0020), read
with ``np.frombuffer``: about a million rows for a million sessions, not sixteen million.

``packed_records`` holds, per (session, scale, part), the columns the every-session anomaly
pass reads (analysis/sessions/every_session.py), as ``LAYOUT``: little-endian, 24 bytes a
record, no padding (docs/storage.md). A part is what one write added to a session: a judge
log's session gains records all through its file, and appending a part costs the records
written, where rewriting the session's string would cost the session's records every batch.
Within a part the records are in the key's order (reviewer, model, position).

Both ways of getting a window's records live here: from the packed strings, a contiguous array
a field (what the anomaly pass reads), and from ``scores`` as ``RECORDS`` (what they are packed
from, and checked against by ``db check``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from council_db.errors import CouncilDbError

if TYPE_CHECKING:
    from council_db.store.reading import Reader

# One packed record: reviewer and candidate ids, display slot (-1: not a display slot), answer
# length in characters (-1: unknown), score. Fixed forever by revision 0020.
LAYOUT = np.dtype([("reviewer", "<i4"), ("model", "<i4"), ("slot", "<i4"), ("length", "<i4"), ("score", "<f8")])
# A record unpacked, with its session and scale.
RECORDS = np.dtype([("session", "<i8"), ("scale", "<i4"), *((name, LAYOUT[name]) for name in LAYOUT.names)])
Columns = dict[str, np.ndarray]  # records as one contiguous array per field of RECORDS
SESSIONS_AT_ONCE = 5_000  # sessions read a chunk (about 80,000 records of a 4x4 council)
RECORDS_AT_ONCE = 50_000  # score rows read a chunk (as Python rows, ~250 bytes each, before they become arrays)

# The usable scores in the order they are packed, for sessions a condition on session_id selects.
SCORE_ROWS = """SELECT session_id, scale_id, reviewer_id, model_id, CASE WHEN display_order THEN position ELSE -1 END,
       response_length_chars, score_value
FROM scores WHERE {sessions} AND exclusion_id IS NULL{scale}
ORDER BY session_id, scale_id, reviewer_id, model_id, position"""
# One scale's strings, a session's parts in any order (the pass sums them): ordering by part too,
# SQLite sorts each session's rows again (a million small sorts). No scale column: a Python int
# a row fewer to make.
PACKED_ROWS = """SELECT session_id, data FROM packed_records WHERE {sessions} AND scale_id = :scale_id
ORDER BY session_id"""


class DamagedPart(CouncilDbError):
    """A packed string whose length is not a whole number of records (an edit by hand)."""


def packed(records: np.ndarray) -> bytes:
    """``RECORDS`` (or any array with LAYOUT's fields) as LAYOUT's bytes."""
    out = np.empty(len(records), LAYOUT)
    for name in LAYOUT.names:
        out[name] = records[name]
    return out.tobytes()


def unpacked_columns(sessions: np.ndarray, scales: np.ndarray | int, parts: list[bytes]) -> Columns:
    """The records of packed strings (bytes, or PostgreSQL's memoryviews), each with its row's
    session and scale (one for all), a contiguous array a field: what the pass reads each field
    of several times (a field of a structured array is strided: reading it costs more each time)."""
    counts = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    if (counts % LAYOUT.itemsize).any():
        bad = int(sessions[np.flatnonzero(counts % LAYOUT.itemsize)[0]])
        raise DamagedPart(f"packed_records of session id {bad} is not a whole number of {LAYOUT.itemsize}-byte "
                          "records: council-db db check --repair rebuilds it from the scores")
    counts //= LAYOUT.itemsize
    flat = np.frombuffer(b"".join(parts), LAYOUT)
    out = {name: np.ascontiguousarray(flat[name]) for name in LAYOUT.names}
    out["session"] = np.repeat(sessions, counts)
    out["scale"] = np.full(len(flat), scales) if isinstance(scales, int) else np.repeat(scales, counts)
    return out


def unpacked(sessions: np.ndarray, scales: np.ndarray, parts: list[bytes]) -> np.ndarray:
    """``unpacked_columns`` as ``RECORDS``, which sort and compare as one block (db check)."""
    return records_of(unpacked_columns(sessions, scales, parts))


def columns_of(records: np.ndarray) -> Columns:
    """``RECORDS`` as a contiguous array a field."""
    return {name: np.ascontiguousarray(records[name]) for name in RECORDS.names}


def records_of(columns: Columns) -> np.ndarray:
    """Columns as ``RECORDS``."""
    out = np.empty(len(columns["session"]), RECORDS)
    for name in RECORDS.names:
        out[name] = columns[name]
    return out


def split_by_key(records: np.ndarray) -> tuple[np.ndarray, list[bytes]]:
    """``RECORDS`` sorted by session and scale as (each (session, scale)'s first record, its packed string)."""
    if not len(records):
        return np.zeros(0, dtype=np.int64), []
    new = np.r_[True, (records["session"][1:] != records["session"][:-1])
                | (records["scale"][1:] != records["scale"][:-1])]
    starts = np.flatnonzero(new)
    data = packed(records)
    size = LAYOUT.itemsize
    ends = np.r_[starts[1:], len(records)]
    return starts, [data[start * size:end * size] for start, end in zip(starts.tolist(), ends.tolist())]


def from_packed(reader: Reader, sessions: str, params: dict[str, Any], scale_id: int) -> Iterator[Columns]:
    """The records on scale ``scale_id`` of the sessions ``sessions`` (a condition on
    session_id) selects, from their packed strings, in chunks of whole sessions (the caller
    carries none over)."""
    chunks = reader.chunks(PACKED_ROWS.format(sessions=sessions), {**params, "scale_id": scale_id}, SESSIONS_AT_ONCE)
    carried: list[Any] = []
    for rows in chunks:
        rows = carried + list(rows) if carried else rows
        last = rows[-1][0]
        cut = len(rows)
        while cut and rows[cut - 1][0] == last:  # the last session's parts may go on in the next chunk
            cut -= 1
        if cut:
            yield _columns_of(rows[:cut], scale_id)
        carried = list(rows[cut:])
    if carried:
        yield _columns_of(carried, scale_id)


def _on_scale(scale_id: int | None, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The condition on one scale (none: every scale) and the parameters with it."""
    return ("", params) if scale_id is None else (" AND scale_id = :scale_id", {**params, "scale_id": scale_id})


def _columns_of(rows: Sequence[Any], scale_id: int) -> Columns:
    """(session_id, data) rows' records: the ids and strings taken out a comprehension each (a
    zip(*rows) of thousands of rows costs more than both)."""
    sessions = np.fromiter([row[0] for row in rows], dtype=np.int64, count=len(rows))
    return unpacked_columns(sessions, scale_id, [row[1] for row in rows])


def from_scores(reader: Reader, sessions: str, params: dict[str, Any], scale_id: int | None = None) \
        -> Iterator[np.ndarray]:
    """The same records read from ``scores`` row by row (what the strings are packed from),
    in chunks of whole sessions."""
    scale, params = _on_scale(scale_id, params)
    chunks = reader.chunks(SCORE_ROWS.format(sessions=sessions, scale=scale), params, RECORDS_AT_ONCE)
    carried = np.zeros(0, RECORDS)
    for rows in chunks:
        records = np.concatenate([carried, np.fromiter(map(tuple, rows), dtype=RECORDS, count=len(rows))])
        last = records["session"] == records["session"][-1]  # the last session may go on in the next chunk
        if not last.all():
            yield records[~last]
        carried = records[last]
    if len(carried):
        yield carried
