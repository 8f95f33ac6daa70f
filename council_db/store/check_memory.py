"""What ``db check`` must read: the ranges that may have changed since the last check that found
the store clean (revision 0021), so that a clean store's check reads none of its records.

Three things mark a range changed:

- council-db's own inserts: the writer marks the session ranges a batch stored records in
  (``mark_sessions``: a row a range, in the batch's transaction), ``db pack`` each range it packs;
- an UPDATE or DELETE of a record table's row, by council-db (delete, prune, undo, repair) or by
  hand (sqlite3, psql): the triggers of revision 0021 mark its session range (and a deleted or
  moved session's day range), a day-totals row's day range, and a referred row's removal every
  reference (``refs``); PostgreSQL's TRUNCATE everything (``all``);
- an INSERT by hand, which no trigger sees (imports only insert: a trigger would cost them a
  statement a row): each range's rows per table are counted (``counts``: one pass of each
  table in its key's order) and compared with the counts the last clean check recorded.

The day ranges to check are those marked or recounted, and those holding a session of a session
range to check. A store with no clean check yet (new, or upgraded to 0021) is checked in full.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterable

from council_db.store.day_sums import TABLES as DAY_TABLES
from council_db.store.derived import SESSION_DAY
from council_db.store.id_runs import id_runs

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from council_db.store.database import Database

SESSIONS_PER_RANGE = 20_000  # session ids a range (revision 0021's triggers say the same)
DAYS_PER_RANGE = 7  # days a range
SESSIONS, DAYS, REFS, ALL = "sessions", "days", "refs", "all"  # check_marks.unit
# the tables counted per range: those keyed by a session, by its id's column, and the day totals
BY_SESSION = {"scores": "session_id", "sessions": "id", "session_stats": "session_id",
              "packed_records": "session_id", "answer_styles": "session_id", "score_dimensions": "session_id"}
BY_DAY = tuple(table.name for table in DAY_TABLES)
MARK = ("INSERT INTO check_marks (unit, number) VALUES (:unit, :number) "
        "ON CONFLICT (unit, number) DO UPDATE SET changes = check_marks.changes + 1")
SESSION_DAY_RANGE = f"({SESSION_DAY}) / {DAYS_PER_RANGE}"  # a session's day range, over ``sessions AS s``


def mark_sessions(connection: Any, session_ids: Iterable[int]) -> None:
    """Mark the session ranges of these sessions changed, in the caller's transaction (the
    writer's, the packer's: an engine's connection or a plain sqlite3 one)."""
    from council_db.store.named_sql import run

    numbers = sorted({int(session) // SESSIONS_PER_RANGE for session in session_ids})
    if numbers:
        run(connection, MARK, [{"unit": SESSIONS, "number": number} for number in numbers])


@dataclass(frozen=True)
class Scope:
    """What one check reads: every range (``full``), or the session and day ranges listed and
    the references of those sessions (every reference where ``references``)."""

    full: bool
    reason: str  # why this scope: "asked", "first", "marked" or "changes"
    session_ranges: int  # the session ranges the store holds
    day_ranges: int  # the day ranges
    sessions: tuple[tuple[int, int], ...] = ()  # (first, last) session ids
    days: tuple[tuple[int, int], ...] = ()  # (first, last) days
    references: bool = False
    since: datetime | None = None  # the last clean check
    marks: tuple[tuple[str, int, int], ...] = ()  # (unit, number, changes) as read: a clean check clears them
    counts: dict[tuple[str, int], int] = field(default_factory=dict)  # (table, range) -> rows, as read

    @property
    def ranges(self) -> int:
        return self.session_ranges + self.day_ranges

    @property
    def checked(self) -> int:
        return self.ranges if self.full else len(self.sessions) + len(self.days)

    def of(self, check: str) -> dict:
        """A check's row's part of the scope (``check``: a finding's table, or table.column of
        a reference): the ranges of its kind it read, of how many, and since when."""
        by_day = check in BY_DAY
        total = self.day_ranges if by_day else self.session_ranges
        every = self.full or ("." in check and (self.references or check.split(".")[0] not in BY_SESSION))
        read = total if every else len(self.days if by_day else self.sessions)
        return {"checked_ranges": read, "ranges": total,
                "last_clean_check": self.since.strftime("%Y-%m-%dT%H:%M:%SZ") if self.since else None}

    def describe(self) -> str:
        """One line: what this check read."""
        if self.full:
            why = {"asked": "--full", "first": "no clean check recorded yet",
                   "marked": "a change no range holds (TRUNCATE)"}[self.reason]
            return f"checked all {self.ranges:,} ranges ({why})"
        since = self.since.strftime("%Y-%m-%dT%H:%M:%SZ") if self.since else "?"
        every = "; every reference (a referred row went)" if self.references else ""
        return (f"{self.checked:,} of {self.ranges:,} ranges changed since the last clean check, {since}"
                f"{every}; --full checks all")


def scope(db: Database, *, full: bool = False) -> Scope:
    """The ranges the check must read: those changed since the last clean check, or all."""
    from sqlalchemy import text

    with db.engine.connect() as connection, connection.begin():
        last = connection.execute(text("SELECT checked_at FROM clean_checks WHERE id = 1")).scalar()
        marks = tuple((str(u), int(n), int(c)) for u, n, c in connection.execute(
            text("SELECT unit, number, changes FROM check_marks")))
        counts = _counts(connection)
        held = (len({n for t, n in counts if t in BY_SESSION}), len({n for t, n in counts if t in BY_DAY}))
        since = _utc(last)
        if full or last is None or any(unit == ALL for unit, _, _ in marks):
            reason = "asked" if full else "first" if last is None else "marked"
            return Scope(True, reason, *held, references=True, since=since, marks=marks, counts=counts)
        recorded = {(t, int(n)): int(r) for t, n, r in connection.execute(
            text("SELECT table_name, number, row_count FROM check_counts"))}
        recounted = {key for key in counts.keys() | recorded.keys() if counts.get(key) != recorded.get(key)}
        sessions = {n for u, n, _ in marks if u == SESSIONS} | {n for t, n in recounted if t in BY_SESSION}
        days = {n for u, n, _ in marks if u == DAYS} | {n for t, n in recounted if t in BY_DAY}
        days |= _days_of(connection, sessions)
    return Scope(False, "changes", *held, _bounds(sessions, SESSIONS_PER_RANGE), _bounds(days, DAYS_PER_RANGE),
                 references=any(unit == REFS for unit, _, _ in marks), since=since, marks=marks, counts=counts)


def record_clean(db: Database, found: Scope) -> bool:
    """After a check found everything it read true: the counts it read become the ones to
    compare with, the marks it saw are cleared (one marked again since stays) and the check is
    the last clean one. False where the store cannot be written (a read-only file)."""
    from sqlalchemy import text
    from sqlalchemy.exc import OperationalError

    from council_db.store.named_sql import run

    try:
        with db.writer() as connection, connection.begin():
            for unit, number, changes in found.marks:
                run(connection, "DELETE FROM check_marks WHERE unit = :unit AND number = :number "
                                "AND changes = :changes", {"unit": unit, "number": number, "changes": changes})
            connection.execute(text("DELETE FROM check_counts"))
            if found.counts:
                run(connection, "INSERT INTO check_counts (table_name, number, row_count) VALUES (:t, :n, :r)",
                    [{"t": t, "n": n, "r": r} for (t, n), r in sorted(found.counts.items())])
            connection.execute(text("DELETE FROM clean_checks"))
            run(connection, "INSERT INTO clean_checks (id, checked_at, every_range, ranges, checked) "
                            "VALUES (1, :at, :every, :ranges, :checked)",
                {"at": datetime.now(timezone.utc).replace(tzinfo=None), "every": found.full, "ranges": found.ranges,
                 "checked": found.checked})
    except OperationalError as error:
        if "readonly" in str(error).replace("-", "").replace(" ", ""):
            return False
        raise
    return True


def _counts(connection: Connection) -> dict[tuple[str, int], int]:
    """(table, range) -> its rows now: one pass of each table in its key's order."""
    from sqlalchemy import text

    found = {}
    for table, column in [*BY_SESSION.items(), *((name, "day") for name in BY_DAY)]:
        per = SESSIONS_PER_RANGE if table in BY_SESSION else DAYS_PER_RANGE
        for number, rows in connection.execute(text(f"SELECT {column} / {per}, COUNT(*) FROM {table} GROUP BY 1")):
            found[(table, int(number))] = int(rows)
    return found


def _days_of(connection: Connection, sessions: set[int]) -> set[int]:
    """The day ranges of the stored sessions of these session ranges."""
    from sqlalchemy import text

    days: set[int] = set()
    for first, last in id_runs(sessions):
        days.update(int(number) for (number,) in connection.execute(
            text(f"SELECT DISTINCT {SESSION_DAY_RANGE} FROM sessions AS s WHERE s.id BETWEEN :first AND :last"),
            {"first": first * SESSIONS_PER_RANGE, "last": (last + 1) * SESSIONS_PER_RANGE - 1}))
    return days


def _bounds(numbers: set[int], size: int) -> tuple[tuple[int, int], ...]:
    return tuple((number * size, number * size + size - 1) for number in sorted(numbers))


def _utc(value: Any) -> datetime | None:
    """clean_checks.checked_at as read: SQLite gives the ORM's text, PostgreSQL a datetime."""
    if value is None:
        return None
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return moment.replace(tzinfo=timezone.utc)
