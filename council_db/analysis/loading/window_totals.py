"""Whole-window totals for the bias report, summed in SQL from ``session_stats`` (one short
row per session, kept at import time), so a window of a million sessions is one pass over
a million rows instead of sixteen million records.

They give what needs every session of the window: counts, time span, exclusions, and the
three length correlations that are functions of per-session sums (naive pooled r, the
within-session r with its cluster-robust SE, and the fixed/random-effects meta-analysis).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from council_db.analysis.stats.correlation import PooledSums, WithinSums
from council_db.analysis.stats.meta_analysis import FisherZSums, RandomSums
from council_db.resources import read_sql
from council_db.store.database import Database
from council_db.store.id_runs import id_ranges

# The sums run in this many id ranges at once (SQLite and psycopg release the GIL while a
# query runs): over a million sessions they are a report's longest query, and while the
# sample's records are read and the analyses' modules load, a core is free for the rest.
PARTS = 2
COMBINE = {"start_us": min, "end_us": max}  # every other column of the sums adds up


@dataclass
class WindowTotals:
    """Sums over the window's sessions on the report's scale (the one most usable scores are on)."""

    sessions: int
    records: int
    known_lengths: int  # records whose answer length is known: the naive pooled r's
    sized_sessions: int  # sessions with such a record
    answers: int  # candidate answers of known length with a usable score from another reviewer
    undated: int
    start_us: int | None
    end_us: int | None
    scale: str
    excluded: dict[str, int]
    # the length correlations' sums; None where only the counts were summed (load_totals)
    pooled: PooledSums | None
    within: WithinSums | None
    fisher: FisherZSums | None
    random_sums: RandomSums | None = field(repr=False)


def _part_sums(db: Database, sums: str, params: dict[str, Any], scale_ids: list[int],
               ids: tuple[int, int]) -> dict[int, dict[str, Any]]:
    """The ``sums`` (sql/report_session_sums.sql) per scale, over the window's sessions with ids in ``ids``."""
    with db.reading() as reader:
        return {scale_id: reader.mapping(sums, {**params, "scale_id": scale_id, "first_id": ids[0], "last_id": ids[1]})
                for scale_id in scale_ids}


def _added(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One row of sums from the parts' rows: counts and sums add up, the time span is the
    widest; NULL (a part with no such session) counts for nothing."""
    def combine(column: str, values: list[Any]) -> Any:
        present = [value for value in values if value is not None]
        if not present:
            return None
        return COMBINE.get(column, sum)(present)
    return {column: combine(column, [part[column] for part in parts]) for column in parts[0]}


def _window_rows(sessions_sql: str, every_session: bool) -> tuple[str, str]:
    """The WITH prefix and the FROM rows of the window's sums (sql/report_session_sums.sql):
    the window's sessions joined to their statistics, or, for ``every_session``, the
    statistics alone, in the same order (the session id's), so the sums are the same numbers."""
    if every_session:
        return "", "session_stats AS st"
    joined = "report_window AS w JOIN session_stats AS st ON st.session_id = w.id"
    return f"WITH report_window AS ({sessions_sql}) ", joined


def sums_sql(sessions_sql: str, *, correlations: bool, every_session: bool) -> str:
    """sql/report_session_sums.sql over the window ``sessions_sql`` selects (see load_totals)."""
    prefix, window_rows = _window_rows(sessions_sql, every_session)
    return prefix + read_sql("report_session_sums").format(
        correlation_sums=read_sql("report_correlation_sums") if correlations else "",
        span_sums="" if every_session else read_sql("report_span_sums"), rows=window_rows)


def _spans(db: Database, scale_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Per scale, the undated sessions and first and last times of a window of every session
    (sql/report_window_span.sql): what its sums, without the sessions' times, leave out."""
    with db.reading() as reader:
        return {scale_id: reader.mapping(read_sql("report_window_span"), {"scale_id": scale_id})
                for scale_id in scale_ids}


def load_totals(db: Database, sessions_sql: str, params: dict[str, Any], *, correlations: bool = True,
                every_session: bool = False) -> WindowTotals | None:
    """The totals of the sessions ``sessions_sql`` selects (their id and ts_us); None when
    the window has no usable score. Without ``correlations``, the counts alone: council-db
    check reads no length correlation, and their sums took half of this pass at 1M sessions.
    ``every_session``: the window is every session of the store and none has an unreadable
    time, so the sums need not look up each session (0.5 s CPU of 3.1 at 1M sessions)."""
    prefix, window_rows = _window_rows(sessions_sql, every_session)
    sums = sums_sql(sessions_sql, correlations=correlations, every_session=every_session)
    with db.reading() as reader:
        scales = reader.rows("SELECT id, name FROM scales ORDER BY id")
        # Two subqueries: SQLite reads MIN or MAX of a key from one end of its index, but
        # both in one SELECT from a scan of every row (90 ms at 1M sessions).
        first_id, last_id = reader.rows("SELECT (SELECT MIN(id) FROM sessions), (SELECT MAX(id) FROM sessions)")[0]
    parts = id_ranges(first_id, last_id, PARTS)
    scale_ids = [i for i, _ in scales]
    with ThreadPoolExecutor(max_workers=len(parts)) as pool:
        summed = list(pool.map(lambda ids: _part_sums(db, sums, params, scale_ids, ids), parts))
    spans = _spans(db, scale_ids) if every_session else {scale_id: {} for scale_id in scale_ids}
    rows = {name: {**_added([part[scale_id] for part in summed]), **spans[scale_id], "scale_id": scale_id}
            for scale_id, name in scales}
    usable = {name: row for name, row in rows.items() if row["usable"]}
    if not usable:
        return None
    scale = max(usable, key=lambda name: (usable[name]["usable"], -usable[name]["scale_id"]))
    main = usable[scale]
    excluded = {"unscored": int(sum(row["unscored"] or 0 for row in rows.values())),
                "out_of_scale": int(sum(row["out_of_scale"] or 0 for row in rows.values()))}
    excluded.update({f"other_scale:{name}": int(row["usable"]) for name, row in usable.items() if name != scale})

    def random_sums(tau2: float) -> tuple[float, float]:
        query = prefix + read_sql("report_session_random_effects").format(rows=window_rows)
        with db.reading() as reader:
            (sw_star, swz_star), = reader.rows(query, {**params, "tau2": tau2, "scale_id": main["scale_id"]})
        return float(sw_star), float(swz_star)

    def number(column: str) -> float:
        return float(main[column] or 0.0)

    counts = dict(  # int() and float(): PostgreSQL sums come back as Decimal
        sessions=int(main["sessions"]), records=int(main["usable"]), known_lengths=int(main["known_lengths"]),
        sized_sessions=int(main["sized_sessions"]), answers=int(main["answers"]),
        undated=int(main["undated"]), start_us=main["start_us"], end_us=main["end_us"], scale=scale,
        excluded={reason: count for reason, count in excluded.items() if count})
    if not correlations:
        return WindowTotals(**counts, pooled=None, within=None, fisher=None, random_sums=None)
    return WindowTotals(
        **counts,
        pooled=PooledSums.from_raw(int(main["known_lengths"]), *map(number, ("sx", "sy", "sxx", "syy", "sxy"))),
        within=WithinSums(int(main["g"]), *map(number, (
            "w_sxy", "w_sxx", "w_syy", "w_sxy_sxy", "w_sxx_sxx", "w_syy_syy", "w_sxx_syy", "w_sxy_sxx", "w_sxy_syy"))),
        fisher=FisherZSums(int(main["k"]), *map(number, ("sw", "sw2", "swz", "swz2")),
                           dropped_reasons={c: int(main[c]) for c in (
                               "too_few_answers", "perfect_correlation", "no_correlation")}),
        random_sums=random_sums,
    )
