"""Which sessions a report covers, and loading their scores as ``ScoreData``.

The window is chosen in SQL (an index on sessions.ts_us makes `--sessions N` and
`--days D` cost in proportion to the window) and the scores come from sql/report_records.sql.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from council_db.analysis_data import ScoreData, from_rows
from council_db.contract import DEFAULT_SCALE, timestamp_us
from council_db.database import Database
from council_db.resources import read_sql
from council_db.sql_filters import time_range

DAY_US = 86_400 * 1_000_000


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

    @property
    def timed(self) -> bool:
        return any(v is not None for v in (self.days, self.since, self.until, self.as_of))

    def as_of_us(self) -> int:
        if self.as_of:
            return timestamp_us(self.as_of)
        return timestamp_us(datetime.now(timezone.utc).isoformat())

    def session_query(self) -> tuple[str, dict[str, Any]]:
        """SQL selecting the window's session ids, and its parameters."""
        clauses, params = [], {}
        if self.timed:
            clauses.append("s.ts_us IS NOT NULL AND s.ts_us <= :as_of")
            params["as_of"] = self.as_of_us()
            if self.as_of:  # data imported after the as-of time is not part of the report
                clauses.append("(s.import_id IS NULL OR s.import_id IN "
                               "(SELECT id FROM imports WHERE started_at <= :as_of_time))")
                params["as_of_time"] = datetime.fromtimestamp(params["as_of"] / 1e6, tz=timezone.utc).replace(
                    tzinfo=None)
        if self.days is not None:
            clauses.append("s.ts_us > :from_us")
            params["from_us"] = params["as_of"] - int(self.days * DAY_US)
        between, values = time_range(self.since, self.until)
        clauses += between
        params.update(values)
        for column, values, name in (("s.council_config_version", self.config_versions, "config"),
                                     ("s.category", self.categories, "category")):
            if values:
                marks = ", ".join(f":{name}{i}" for i in range(len(values)))
                clauses.append(f"{column} IN ({marks})")
                params.update({f"{name}{i}": v for i, v in enumerate(values)})
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        limit = ""
        if self.sessions is not None:
            limit = " ORDER BY CASE WHEN s.ts_us IS NULL THEN 1 ELSE 0 END, s.ts_us DESC, s.id DESC LIMIT :limit"
            params["limit"] = self.sessions
        return f"SELECT s.id FROM sessions AS s{where}{limit}", params


def load(db: Database, window: Window) -> ScoreData:
    """The window's usable scores on its main scale; everything left out is counted by reason."""
    sessions_sql, params = window.session_query()
    return load_sessions(db, sessions_sql, params, reviewers=window.reviewers, models=window.models)


def load_sessions(db: Database, sessions_sql: str, params: dict[str, Any], *,
                  reviewers: list[str] = (), models: list[str] = ()) -> ScoreData:
    """The scores of the sessions ``sessions_sql`` selects (their ids), on the main scale."""
    from sqlalchemy import text

    query = text(f"WITH report_window AS ({sessions_sql}) " + read_sql("report_records"))
    with db.engine.connect() as connection:
        rows = connection.execute(query, params).fetchall()
    # Columns by position (sql/report_records.sql): 2 reviewer, 3 model, 7 scale, 8 exclusion.
    if reviewers:
        rows = [r for r in rows if r[2] in reviewers]
    if models:
        rows = [r for r in rows if r[3] in models]
    usable = [r for r in rows if r[8] is None]
    scales = Counter(r[7] for r in usable)
    scale = scales.most_common(1)[0][0] if scales else DEFAULT_SCALE
    excluded = Counter(r[8] for r in rows if r[8] is not None)
    if len(scales) > 1:
        excluded.update(f"other_scale:{r[7]}" for r in usable if r[7] != scale)
        usable = [r for r in usable if r[7] == scale]
    return from_rows(usable, scale=scale, excluded=dict(excluded))
