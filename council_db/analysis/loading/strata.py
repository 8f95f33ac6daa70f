"""The report's sample made stratified: every reviewer and candidate of the window gets
min(all its sessions, 200) sessions in it (``per_subject`` of the default sample of 5,000).

The base sample stays the hash-based one (``window.sample_query``: sessions whose key's hash
is below the share sampled), so it stays stable as data grows. A subject (reviewer or
candidate) with fewer base sessions than that gets its lowest-hash further sessions: in
effect its own, higher hash threshold. Those are found in SQL, in rounds over widening
hash ranges above the base threshold (each four times the last), probing only the scores of
the subjects still short, so a common subject costs nothing and a rare one costs the share
of the window it takes to find its sessions, never Python rows of the window.
"""

from __future__ import annotations

from typing import Any

from council_db.contract.timestamps import EPOCH
from council_db.store import key_hash
from council_db.store.reading import Reader

# Sessions each reviewer and candidate has in the sample (or all of its own if fewer), as a share
# of the sample's size: 200 in the default sample of 5,000, and so a smaller --sample-sessions
# (a test's, a quick look) is not swamped by its subjects' floors.
SUBJECT_SHARE = 0.04
WIDEN = 4  # each round's hash bound is this many times the last
ROLES = ("reviewer_id", "model_id")
_DAY_ONE = EPOCH.date().toordinal()  # the day number (date.toordinal()) of ts_us 0
_DAY_US = 86_400 * 1_000_000


def per_subject(sample_sessions: int) -> int:
    """The sessions each subject has in a sample of about ``sample_sessions`` (at least one)."""
    return max(1, round(sample_sessions * SUBJECT_SHARE))


def added_sessions(reader: Reader, dialect: str, keyed_sql: str, params: dict[str, Any], base: list[int],
                   hash_below: int, floor: int, named: dict[str, list[str]] | None = None) -> list[int]:
    """The ids of the sessions ``keyed_sql`` selects (columns id, key_hash, session_key, ts_us)
    that the stratification adds to the ``base`` sample (those with hash below ``hash_below``)
    so that every subject has min(its sessions, ``floor``). ``named``: per role, the names a
    window keeps (--reviewer, --model), whose subjects alone are topped up (none: all)."""
    short = _short_subjects(reader, keyed_sql, params, base, floor)
    for role, names in (named or {}).items():
        if names:
            marks = ", ".join(f":name{i}" for i in range(len(names)))
            kept = {row[0] for row in reader.rows(f"SELECT id FROM models WHERE name IN ({marks})",
                                                  {f"name{i}": name for i, name in enumerate(names)})}
            short[role] = {s: need for s, need in short[role].items() if s in kept}
    hashed = f"COALESCE(w.key_hash, {key_hash.key_hash_sql(dialect, 'w.session_key')})"
    added: dict[int, None] = {}
    low = hash_below
    while any(short.values()) and low < 2 ** key_hash.BITS:
        high = min(low * WIDEN if low else 1, 2 ** key_hash.BITS)
        found = reader.rows(_round_sql(keyed_sql, hashed, short, floor), {**params, "low": low, "high": high})
        for role, subject, session in found:
            if short[role].get(subject, 0) > 0:
                short[role][subject] -= 1
                added[session] = None
        short = {role: {s: need for s, need in needs.items() if need > 0} for role, needs in short.items()}
        low = high
    return list(added)


def _short_subjects(reader: Reader, keyed_sql: str, params: dict[str, Any], base: list[int], floor: int) \
        -> dict[str, dict[int, int]]:
    """Per role, the window's subjects with fewer than ``floor`` base sessions, and how many
    more each may take. Who is in the window comes from the day totals (a few thousand rows);
    only when a stored subject is short is its presence checked over the window's span of
    days (a pass over the window's times), so a subject long gone is not searched for."""
    in_base = _base_counts(reader, base)
    short = {role: {s: floor - in_base[role].get(s, 0) for s in _stored(reader, role, "")
                    if in_base[role].get(s, 0) < floor} for role in ROLES}
    if not any(short.values()):
        return short
    first, last = reader.rows(f"SELECT MIN(w.ts_us), MAX(w.ts_us) FROM ({keyed_sql}) AS w", params)[0]
    days = " WHERE day = 0" + ("" if first is None else f" OR day BETWEEN {_day(first)} AND {_day(last)}")
    return {role: {s: short[role][s] for s in _stored(reader, role, days) if s in short[role]} for role in ROLES}


def _stored(reader: Reader, role: str, where: str) -> list[int]:
    """The reviewers (``role`` reviewer_id) or candidates (model_id) with usable scores on the
    days ``where`` selects, from the day totals."""
    table = "reviewer_day_totals" if role == "reviewer_id" else "model_day_totals"
    return [row[0] for row in reader.rows(f"SELECT DISTINCT {role} FROM {table}{where}")]


def _day(ts_us: int) -> int:
    return _DAY_ONE + ts_us // _DAY_US


def _base_counts(reader: Reader, base: list[int]) -> dict[str, dict[int, int]]:
    """Per role, each subject's sessions (with a usable score) in the base sample."""
    ids = ", ".join(map(str, base)) or "NULL"
    return {role: dict(reader.rows(f"SELECT {role}, COUNT(DISTINCT session_id) FROM scores "
                                   f"WHERE session_id IN ({ids}) AND exclusion_id IS NULL GROUP BY {role}"))
            for role in ROLES}


def _round_sql(keyed_sql: str, hashed: str, short: dict[str, dict[int, int]], floor: int) -> str:
    """One round: the short subjects' sessions with hash in [low, high), at most ``floor``
    each, lowest hash first (the ids of the subjects are integers from the database). The
    CROSS JOIN keeps SQLite probing the scores of the range's sessions (the key's first
    column) rather than scanning every score for the subject's; the unary + keeps it from
    probing the key once per (session, listed subject): with 50,000 short reviewers that was
    2.5e9 probes, minutes, where testing each score against the list takes 0.3 s."""
    parts = []
    for role, needs in short.items():
        if needs:
            subjects = ", ".join(map(str, needs))
            parts.append(f"SELECT '{role}' AS role, sc.{role} AS subject, w.id AS session, w.h AS h FROM in_range AS w "
                         f"CROSS JOIN scores AS sc WHERE sc.session_id = w.id AND +sc.{role} IN ({subjects}) "
                         f"AND sc.exclusion_id IS NULL GROUP BY sc.{role}, w.id, w.h")
    ranked = (f"SELECT role, subject, session, ROW_NUMBER() OVER (PARTITION BY role, subject ORDER BY h, session) "
              f"AS n FROM ({' UNION ALL '.join(parts)}) AS found")
    return (f"WITH in_range AS (SELECT w.id, {hashed} AS h FROM ({keyed_sql}) AS w "
            f"WHERE {hashed} >= :low AND {hashed} < :high) "
            f"SELECT role, subject, session FROM ({ranked}) AS ranked WHERE n <= {floor} "
            f"ORDER BY role, subject, n")
