"""Which sessions a report covers, and loading their scores as ``ScoreData``.

The window is chosen in SQL (an index on sessions.ts_us makes `--sessions N` and
`--days D` cost in proportion to the window) and the scores come from sql/report_records.sql
(analysis/loading/window_records.py).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import msgspec
import numpy as np

from council_db.analysis.loading import strata
from council_db.analysis.loading.score_data import ScoreData, judges_only
from council_db.analysis.loading.window_records import fetch_records, reference_kinds, score_data
from council_db.analysis.loading.window_totals import WindowTotals, load_totals
from council_db.contract.timestamps import EPOCH, MIN_US, format_us, timestamp_us
from council_db.store import key_hash
from council_db.store.database import Database
from council_db.store.sql_filters import READABLE_TIME, UNREADABLE_TIME, time_range

DAY_US = 86_400 * 1_000_000
# Above this many sessions, record-level analyses (the joint model, reviewers, slots,
# agreement) run on a sample of about this many of the window's sessions (``sample_query``):
# their intervals are already narrow at this size, and it keeps a report over a million
# sessions within seconds.
SAMPLE_SESSIONS = 5_000
ALL_SESSIONS = 2**62  # more than any database holds (SQL integers stop at 2**63): more latest sessions means all
SAMPLE_BY = "sessions whose key's hash is below the share sampled"
SAMPLE_METHOD = ("sessions whose session key's hash (the first 32 bits of its MD5) is below the share sampled, "
                 "plus, for each reviewer and candidate with fewer than min(its sessions, 4% of the sample size: "
                 "200 of 5,000) of them, its lowest-hash further sessions up to that number")
UNREADABLE = "unreadable_timestamp"  # the reason records of a session with an unreadable stored time are left out


def _now_us() -> int:
    return timestamp_us(datetime.now(timezone.utc).isoformat())


class Requested(msgspec.Struct, frozen=True):
    """The span a window asks for: its options' bounds, counted from its as-of time (or the
    time it was made), whatever the data holds. Beside the span the data fills (the first and
    last session's time), it is the other half of what a report states about its window."""

    start_us: int | None  # None: no lower time bound
    end_us: int | None  # None: no upper time bound
    words: str  # e.g. "every session from ... (--days 30 before --as-of) to ... (--as-of)"


@dataclass
class Window:
    """What a report covers. Times are ISO-8601 strings (naive = UTC)."""

    sessions: int | None = None  # the latest N sessions
    days: float | None = None  # sessions in the D days up to as_of
    since: str | None = None
    until: str | None = None
    as_of: str | None = None  # ignore what happened after this time: reproducible reports
    reviewers: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    config_versions: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    dimension: str | None = None  # a rubric dimension's scores in place of the overall ones (dimension_scores)
    # When the window was made: "now" for a window without as_of, fixed once so that every
    # query of one report, and the span it states, count from the same instant.
    made_us: int = field(default_factory=_now_us, repr=False, compare=False)

    def __post_init__(self) -> None:
        """The latest N sessions for an N past any database's size are all of them, whoever
        asks (the CLI, the API, the Datasette page): SQL's integers could not hold N."""
        if self.sessions is not None:
            self.sessions = min(self.sessions, ALL_SESSIONS)

    @property
    def timed(self) -> bool:
        return any(v is not None for v in (self.days, self.since, self.until, self.as_of))

    @property
    def every_session(self) -> bool:
        """Whether the window asks for every session the store holds (all with a readable time)."""
        return not self.timed and self.sessions is None and not self.config_versions and not self.categories

    def as_of_us(self) -> int:
        if self.as_of:
            return timestamp_us(self.as_of)
        return self.made_us

    def imported_by(self) -> datetime | None:
        """With --as-of, the time an import must have started by for what it stored to count
        (naive UTC, as the imports table keeps it); None: every import counts."""
        if not self.as_of:
            return None
        return (EPOCH + timedelta(microseconds=self.as_of_us())).replace(tzinfo=None)

    def _days_from_us(self, as_of_us: int) -> int:
        """Where --days starts (exclusive): as_of minus the days, or just before year 1 for more."""
        span_us = min(self.days * DAY_US, as_of_us - MIN_US + 1)  # more days than since year 1: all
        return as_of_us - int(span_us)

    def requested(self) -> Requested:
        """The span the options ask for, and where each bound comes from, in words."""
        selection = "every session" if self.sessions is None else f"the latest {self.sessions:,} sessions"
        if not self.timed:
            return Requested(None, None, f"{selection}, no time bound")
        end_us = self.as_of_us()
        end_from = "--as-of" if self.as_of else "the report's time"
        start_us, start_from = None, ""
        if self.days is not None and self._days_from_us(end_us) >= MIN_US:
            start_us, start_from = self._days_from_us(end_us), f"--days {self.days:g} before {end_from}"
        since = timestamp_us(self.since)
        if since is not None and (start_us is None or since > start_us):
            start_us, start_from = since, "--since"
        until = timestamp_us(self.until)
        if until is not None and until <= end_us:
            end_us, end_from = until, "--until"
        to = f"{format_us(end_us)} ({end_from})"
        if start_us is None:
            return Requested(None, end_us, f"{selection} up to {to}")
        return Requested(start_us, end_us, f"{selection} from {format_us(start_us)} ({start_from}) to {to}")

    def session_query(self, columns: str = "s.id") -> tuple[str, dict[str, Any]]:
        """SQL selecting the window's sessions (their ids, or other ``columns`` of sessions AS s),
        and its parameters. A session whose stored time cannot be read is in no window."""
        clauses, params = [READABLE_TIME], {}
        if self.timed:
            clauses.append("s.ts_us IS NOT NULL AND s.ts_us <= :as_of")
            params["as_of"] = self.as_of_us()
            if self.as_of:  # data imported after the as-of time is not part of the report
                clauses.append("(s.import_id IS NULL OR s.import_id IN "
                               "(SELECT id FROM imports WHERE started_at <= :as_of_time))")
                params["as_of_time"] = self.imported_by()
        if self.days is not None:
            clauses.append("s.ts_us > :from_us")
            params["from_us"] = self._days_from_us(params["as_of"])
        between, values = time_range(self.since, self.until)
        clauses += between
        params.update(values)
        for column, values, name in (("s.council_config_version", self.config_versions, "config"),
                                     ("s.category", self.categories, "category")):
            if values:
                marks = ", ".join(f":{name}{i}" for i in range(len(values)))
                clauses.append(f"{column} IN ({marks})")
                params.update({f"{name}{i}": v for i, v in enumerate(values)})
        where = " WHERE " + " AND ".join(clauses)
        limit = ""
        if self.sessions is not None:
            limit = " ORDER BY s.ts_us DESC NULLS LAST, s.id DESC LIMIT :limit"  # the ts_us index gives this order
            params["limit"] = self.sessions
        return f"SELECT {columns} FROM sessions AS s{where}{limit}", params


class WindowData(msgspec.Struct):
    """What a report analyses: the window's scores, or, for a window of more than the sample
    size, the scores of a sample of its sessions plus whole-window totals. ``data`` holds the
    judges' scores only; ``with_reference`` the same sessions with their human raters' and gold
    labels' scores too (None when the window has none)."""

    data: ScoreData
    window_sessions: int | None = None  # sessions the window selects, when ``data`` is a sample of them
    totals: WindowTotals | None = None  # whole-window sums, when ``data`` is a sample and unfiltered
    with_reference: ScoreData | None = None
    added: int = 0  # sessions the stratification added to the hash-based sample (strata.py)
    per_subject: int = 0  # the sessions each reviewer and candidate has in it, or all of its own if fewer
    hash_below: int | None = None  # the key hash below which a session is in the hash-based part

    @classmethod
    def of(cls, data: ScoreData, window_sessions: int | None = None, totals: WindowTotals | None = None, *,
           chosen: _Chosen | None = None) -> WindowData:
        """The judges' scores of ``data`` (every reviewer's), keeping all of it for the reference."""
        judges = judges_only(data)
        strata_of = (len(chosen.added), chosen.per_subject, chosen.hash_below) if chosen else (0, 0, None)
        return cls(judges, window_sessions, totals, None if judges is data else data, *strata_of)


def load_for_report(db: Database, window: Window, sample_sessions: int = SAMPLE_SESSIONS, *,
                    correlations: bool = True) -> WindowData:
    """The window's scores; above ``sample_sessions`` sessions (0 = never), the record-level
    analyses get a sample of about that many of the window's sessions (see ``sample_query``),
    and counts and length correlations (without ``correlations``: the counts alone) come from
    per-session totals over all of it."""
    left_out = _unreadable(db)
    loaded = _load_for_report(db, window, sample_sessions, correlations, every_session=not left_out)
    loaded.data.excluded.update(left_out)
    if loaded.totals is not None:
        loaded.totals.excluded.update(left_out)
    return loaded


def load_sample(db: Database, window: Window, sample_sessions: int = SAMPLE_SESSIONS) -> WindowData:
    """The window's scores; above ``sample_sessions`` sessions (0 = never), those of the
    report's sample of about that many of its sessions (``sample_query``), with the window's
    session count. For the analyses that need records (the joint model and what rests on it):
    reading a million sessions' records would take minutes and gigabytes."""
    loaded = _sampled(db, window, sample_sessions)
    loaded.data.excluded.update(_unreadable(db))
    return loaded


def sample_note(loaded: WindowData) -> str | None:
    """What a sampled window's output says about its sample (None: not sampled)."""
    if loaded.window_sessions is None:
        return None
    return (f"a sample of {loaded.data.n_sessions:,} of the window's {loaded.window_sessions:,} sessions "
            f"(the bias report's: {strata_note(loaded)})")


def strata_note(loaded: WindowData) -> str:
    """How the sample was drawn, in words: the hash share, and what the stratification added."""
    if not loaded.added:
        return f"{SAMPLE_BY}; every reviewer and candidate had min(its sessions, {loaded.per_subject:,}) in it"
    return (f"{SAMPLE_BY}, plus {loaded.added:,} so that every reviewer and candidate has min(its sessions, "
            f"{loaded.per_subject:,})")


def hash_sample(loaded: WindowData, data: ScoreData) -> np.ndarray | None:
    """Per session of ``data`` (the loaded sample, or part of it), whether the hash-based part
    of the sample chose it; None when the stratification added nothing."""
    if not loaded.added:
        return None
    return np.array([key_hash.key_hash(k) < loaded.hash_below for k in data.session_keys], dtype=bool)


def _sampled(db: Database, window: Window, sample_sessions: int) -> WindowData:
    in_window, chosen = _sample(db, window, sample_sessions)
    if chosen is None:
        return WindowData.of(_every_kind(db, *window.session_query(), window))
    return WindowData.of(_every_kind(db, _ids_sql(chosen.ids), {}, window), in_window, chosen=chosen)


def _every_kind(db: Database, sessions_sql: str, params: dict[str, Any], window: Window) -> ScoreData:
    """The scores of every reviewer, judge or reference, of these sessions."""
    return score_data(fetch_records(db, sessions_sql, params, reviewers=window.reviewers, models=window.models,
                                    dimension=window.dimension, imported_by=window.imported_by()))


def _load_for_report(db: Database, window: Window, sample_sessions: int, correlations: bool, *,
                     every_session: bool) -> WindowData:
    """``load_for_report``; ``every_session``: no session's stored time is unreadable, so a
    window asking for every session holds all of them (its sums then skip the sessions)."""
    small = window.sessions is not None and window.sessions <= sample_sessions  # never needs a sample
    # The whole-window sums add every reviewer's scores: with human raters or gold labels among
    # them they would mix the reference into the judges' figures, so the sample serves alone. They
    # sum the overall scores: a dimension's window is read from its records alone.
    if (window.reviewers or window.models or window.dimension or not sample_sessions or small or _has_reference(db)
            or _added_later(db, window)):
        return _sampled(db, window, sample_sessions)
    # The totals' pass over the whole window is the longest query, so it starts first; the
    # count, the choice of the sample and the sample's records run meanwhile, each on its own
    # connection (the database releases the GIL while a query runs).
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(load_totals, db, *window.session_query("s.id, s.ts_us"), correlations=correlations,
                              every_session=every_session and window.every_session)
        in_window, chosen = _sample(db, window, sample_sessions)
        if chosen is None:
            return WindowData.of(_every_kind(db, *window.session_query(), window))
        records = fetch_records(db, _ids_sql(chosen.ids), {}, imported_by=window.imported_by())
        totals = pending.result()
    return WindowData.of(score_data(records, scale=totals.scale if totals else None), in_window, totals,
                         chosen=chosen)


def _added_later(db: Database, window: Window) -> bool:
    """Whether an import started after --as-of added records to the window's sessions (a judge
    file of another model graded on the same questions): the per-session sums hold them, so
    such a window is read from its records alone, which leave them out. Only then is the scan
    of the scores paid (seconds at a million sessions)."""
    if not window.as_of:
        return False
    sessions_sql, params = window.session_query()
    later = "SELECT i.id FROM imports AS i WHERE i.started_at > :as_of_time"
    with db.reading() as reader:
        if not reader.scalar(f"SELECT COUNT(*) FROM ({later}) AS later", params):
            return False
        return bool(reader.scalar(f"SELECT COUNT(*) FROM (SELECT 1 FROM scores AS sc WHERE sc.import_id IN ({later}) "
                                  f"AND sc.session_id IN ({sessions_sql}) LIMIT 1) AS found", params))


def _has_reference(db: Database) -> bool:
    """Whether any stored reviewer is a human rater or a gold label."""
    with db.reading() as reader:
        return bool(reference_kinds(reader))


class _Chosen(msgspec.Struct, frozen=True):
    """A sample's session ids: the hash-based base sample, and those the stratification added."""

    base: list[int]
    added: list[int]
    per_subject: int
    hash_below: int

    @property
    def ids(self) -> list[int]:
        return self.base + self.added


def _sample(db: Database, window: Window, sample_sessions: int) -> tuple[int, _Chosen | None]:
    """How many sessions the window holds, and its sample (None: no sample needed)."""
    sessions_sql, params = window.session_query()
    with db.reading() as reader:
        in_window = reader.scalar(f"SELECT COUNT(*) FROM ({sessions_sql}) AS w", params)
        if not sample_sessions or in_window <= sample_sessions:
            return in_window, None
        keyed_sql, _ = window.session_query("s.id, s.key_hash, s.session_key, s.ts_us")
        below = {**params, "hash_below": sample_threshold(sample_sessions, in_window)}
        base = [row[0] for row in reader.rows(sample_query(keyed_sql, db.dialect), below)]
        floor = strata.per_subject(sample_sessions)
        added = strata.added_sessions(reader, db.dialect, keyed_sql, params, base, below["hash_below"], floor,
                                      {"reviewer_id": window.reviewers, "model_id": window.models})
        return in_window, _Chosen(base, added, floor, below["hash_below"])


def _ids_sql(ids: list[int]) -> str:
    """The sample as SQL. The ids are written into it (integers from the database): as a
    subquery the planner may scan every score instead of looking up the sample's."""
    return f"SELECT id FROM sessions WHERE id IN ({', '.join(map(str, ids)) or 'NULL'})"


def sample_threshold(sample_sessions: int, in_window: int) -> int:
    """The key hash below which a session is in the sample: the share sampled of 2^32."""
    return int(sample_sessions / in_window * 2 ** key_hash.BITS)


def sample_query(keyed_sql: str, dialect: str) -> str:
    """SQL keeping the sessions ``keyed_sql`` selects (its columns: id, key_hash, session_key)
    whose key's hash is below the parameter hash_below (``store.key_hash``). Chosen by the
    records, not by row ids, which depend on the order the records were imported in: the same
    records give the same sample, and so the same report, on any store and either backend.
    The hash is stored with each session (revision 0014: hashing a million keys per report
    cost a second); a session written by another tool, without it, is hashed here. In SQL,
    so a million keys never travel to Python; a window always gets the same sample, and a
    session once sampled stays sampled in every window that holds it at that share. A hash
    takes no notice of patterns in the data (a rotation of configs, sessions numbered in
    order), as every k-th session would."""
    hashed = key_hash.key_hash_sql(dialect, "w.session_key")
    return f"SELECT w.id FROM ({keyed_sql}) AS w WHERE COALESCE(w.key_hash, {hashed}) < :hash_below"


def load(db: Database, window: Window) -> ScoreData:
    """The window's judges' usable scores on its main scale; everything left out is counted by
    reason."""
    sessions_sql, params = window.session_query()
    data = load_sessions(db, sessions_sql, params, reviewers=window.reviewers, models=window.models,
                         dimension=window.dimension, imported_by=window.imported_by())
    data.excluded.update(_unreadable(db))
    return data


def _unreadable(db: Database) -> dict[str, int]:
    """The records left out because their session's stored time cannot be read (no window
    holds them), as an exclusion reason; {} when there are none. Cheap: an index range on
    sessions.ts_us, usually empty."""
    query = f"SELECT COUNT(*) FROM scores WHERE session_id IN (SELECT s.id FROM sessions AS s WHERE {UNREADABLE_TIME})"
    with db.reading() as reader:
        count = reader.scalar(query)
    return {UNREADABLE: count} if count else {}


def unreadable_warnings(excluded: dict[str, int]) -> list[str]:
    """The warning that says records were left out for an unreadable stored time, and what to do."""
    count = excluded.get(UNREADABLE)
    if not count:
        return []
    return [f"{count:,} records have a stored time that cannot be read (outside years 0001-9999 UTC): reports "
            "leave them out; correct or delete their sessions"]


def load_sessions(db: Database, sessions_sql: str, params: dict[str, Any], *, reviewers: list[str] = (),
                  models: list[str] = (), min_consent: int = 1, dimension: str | None = None,
                  imported_by: datetime | None = None) -> ScoreData:
    """The judges' scores of the sessions ``sessions_sql`` selects (their ids), on the scale most
    of them are on (with ``dimension``, that rubric dimension's; with ``imported_by``, only what
    imports started by then stored)."""
    return judges_only(score_data(fetch_records(db, sessions_sql, params, reviewers=reviewers, models=models,
                                                min_consent=min_consent, dimension=dimension,
                                                imported_by=imported_by)))
