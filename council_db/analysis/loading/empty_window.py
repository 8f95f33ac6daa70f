"""Where the data is, when a window holds none of it.

A window that selects no session while the database holds some is nearly always a window
put in the wrong place (--days too short, --since after the last session, a misspelt
--reviewer): saying where the sessions are, and which option reaches them, beats a report
on nothing.
"""

from __future__ import annotations

import math

from council_db.analysis.loading.window import DAY_US, Window
from council_db.contract.timestamps import format_us, timestamp_us
from council_db.store.database import Database
from council_db.store.sql_filters import READABLE_TIME

ROUND_DAYS = (1, 7, 14, 30, 60, 90, 180, 365)


def where_the_data_is(db: Database, window: Window) -> str | None:
    """For a window without sessions: the database's sessions (how many, the newest) and the
    option that would reach them; None when the database holds no session either."""
    with db.reading() as reader:
        stored, oldest, newest = reader.rows(
            f"SELECT count(*), min(s.ts_us), max(s.ts_us) FROM sessions AS s WHERE {READABLE_TIME}")[0]
    if not stored:
        return None
    held = f"no session in this window, but the database holds {stored:,} sessions"
    if newest is None:
        return f"{held}, none with a time: leave out --days, --since, --until and --as-of"
    return f"{held}, the newest {_day(newest)}; {_hint(window, oldest, newest)}"


def _hint(window: Window, oldest: int, newest: int) -> str:
    """The option that would reach the stored sessions, first the one most likely at fault."""
    as_of = window.as_of_us()
    since = timestamp_us(window.since) if window.since else None
    until = timestamp_us(window.until) if window.until else None
    if window.as_of and as_of < oldest:
        return f"try --as-of {_day(newest)} (it also leaves out what was imported after it)"
    if since is not None and since > newest:
        return f"try --since {_day(newest)}"
    if until is not None and until <= oldest:
        return f"try --until {_day(oldest + DAY_US)}"
    if window.days is not None and newest <= as_of:
        return f"try --days {_round_days((as_of - newest) / DAY_US)}"
    given = [f"{option} {value}" for option, values in (("--reviewer", window.reviewers), ("--model", window.models),
                                                       ("--config-version", window.config_versions),
                                                       ("--category", window.categories)) for value in values]
    if given:
        return f"check {', '.join(given)} (council-db sql lists what is stored)"
    return "widen the window"


def _round_days(days: float) -> int:
    """The first round number of days above ``days``: 7, 14, 30, 60, 90, 180, 365, then years."""
    return next((d for d in ROUND_DAYS if d > days), 365 * math.ceil((days + 1) / 365))


def _day(ts_us: int) -> str:
    return (format_us(ts_us) or "")[:10]
