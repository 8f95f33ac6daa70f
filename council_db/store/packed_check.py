"""``db check`` of ``packed_records``, on a store that keeps them (store/packing.py): each
(session, scale)'s packed strings against its usable scores, a range of sessions at a time;
``--repair`` packs the sessions found wrong again.

A range is read both ways (store/packed_records.py) and, each side sorted on every field,
compared as one block of bytes: the parts of a session may hold its records in another order
than its scores (a part per write). Only a range that differs is compared (session, scale)
by (session, scale), to count and name what is missing, extra or differing; a string that is
not a whole number of records (an edit by hand) differs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from council_db.store.derived import EXAMPLES, Finding, rows_in
from council_db.store.packed_records import LAYOUT, RECORDS, DamagedPart, from_scores, unpacked
from council_db.store.packed_writes import STATE_SQL, rebuild

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from council_db.store.database import Database

TABLE = "packed_records"
STEP = 20_000  # sessions a range (about 320,000 records of 4x4 councils)
IN_RANGE = "session_id BETWEEN :first AND :last"
FIELDS = ("session", "scale", *LAYOUT.names)


def check(db: Database, *, repair: bool = False, ranges: tuple[tuple[int, int], ...] | None = None) -> list[Finding]:
    """Compare every packed string with its scores (only those of the session-id ``ranges``,
    where given: the finding's ``rows`` are then theirs); with ``repair``, pack the sessions of
    each range that differs again (under the write lock, checked again inside its transaction).
    No finding where the store keeps no copy, or `db pack` is still filling it (store/packing.py)."""
    from sqlalchemy import text

    finding = Finding(TABLE)
    with db.engine.connect() as connection:
        if connection.exec_driver_sql(STATE_SQL).scalar() != "on":
            return []
        if ranges is None:
            finding.rows = connection.execute(text(f"SELECT COUNT(*) FROM {TABLE}")).scalar_one()
            ranges = _every_range(connection)
        else:
            finding.rows = rows_in(connection, TABLE, "session_id", ranges)
    for first, last in ranges:
        bounds = {"first": first, "last": last}
        with (db.writer() if repair else db.engine.connect()) as connection, connection.begin():
            wrong = _wrong_sessions(connection, bounds, finding)
            if wrong and repair:
                rebuild(connection, wrong)
                finding.repaired = True
    return [finding]


def _every_range(connection: Connection) -> tuple[tuple[int, int], ...]:
    """STEP sessions a range from the least session id to the greatest, stored or packed."""
    from sqlalchemy import text

    low, high = connection.execute(text(
        f"SELECT MIN(low), MAX(high) FROM (SELECT MIN(id) AS low, MAX(id) AS high FROM sessions UNION ALL "
        f"SELECT MIN(session_id), MAX(session_id) FROM {TABLE}) AS both_tables")).one()
    if low is None:
        return ()
    return tuple((first, min(first + STEP - 1, high)) for first in range(low, high + 1, STEP))


def _wrong_sessions(connection: Connection, bounds: dict[str, int], finding: Finding) -> set[int]:
    """The range's sessions whose strings differ from their scores, counted into ``finding``."""
    from sqlalchemy import text

    from council_db.store.reading import EngineReader

    expected = _sorted(list(from_scores(EngineReader(connection), IN_RANGE, bounds)))
    rows = connection.execute(text(f"SELECT session_id, scale_id, data FROM {TABLE} WHERE {IN_RANGE} "
                                   "ORDER BY session_id, scale_id, part"), bounds).all()
    try:
        stored = _sorted([_unpacked(rows)])
        if stored.tobytes() == expected.tobytes():
            return set()
    except DamagedPart:
        pass
    return _compared(_by_key(expected), _stored_by_key(rows), finding)


def _sorted(chunks: list[np.ndarray]) -> np.ndarray:
    """The records of every chunk, sorted on every field (session first)."""
    records = np.concatenate(chunks) if chunks else np.zeros(0, RECORDS)
    return records[np.lexsort([records[name] for name in reversed(FIELDS)])]


def _unpacked(rows: list[Any]) -> np.ndarray:
    if not rows:
        return np.zeros(0, RECORDS)
    sessions, scales, parts = zip(*rows)
    return unpacked(np.array(sessions, dtype=np.int64), np.array(scales, dtype=np.int64), list(parts))


def _by_key(records: np.ndarray) -> dict[tuple[int, int], bytes]:
    """(session, scale) -> its sorted records' bytes."""
    keys = list(zip(records["session"].tolist(), records["scale"].tolist()))
    found: dict[tuple[int, int], list[int]] = {}
    for number, key in enumerate(keys):
        found.setdefault(key, []).append(number)
    return {key: records[numbers].tobytes() for key, numbers in found.items()}


def _stored_by_key(rows: list[Any]) -> dict[tuple[int, int], bytes | None]:
    """(session, scale) -> its parts' records, sorted, as bytes (None: not whole records)."""
    parts: dict[tuple[int, int], list[Any]] = {}
    for session, scale, data in rows:
        parts.setdefault((session, scale), []).append((session, scale, data))
    out: dict[tuple[int, int], bytes | None] = {}
    for key, own in parts.items():
        try:
            out[key] = _sorted([_unpacked(own)]).tobytes()
        except DamagedPart:
            out[key] = None
    return out


def _compared(expected: dict[tuple[int, int], bytes], stored: dict[tuple[int, int], bytes | None],
              finding: Finding) -> set[int]:
    wrong: set[int] = set()
    for key in sorted(expected.keys() | stored.keys()):
        problem = ("missing" if key not in stored else "extra" if key not in expected
                   else "differing" if stored[key] != expected[key] else None)
        if problem is None:
            continue
        setattr(finding, problem, getattr(finding, problem) + 1)
        if len(finding.examples) < EXAMPLES:
            finding.examples.append(f"{problem} (session_id={key[0]}, scale_id={key[1]})")
        wrong.add(key[0])
    return wrong
