"""What is stored: totals (``stats``) and the latest sessions (``sessions``)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from council_db.contract.fields import EXCLUSION_REASONS
from council_db.contract.timestamps import MAX_US, MIN_US, format_us
from council_db.resources import read_sql
from council_db.store.database import Database
from council_db.store.id_runs import id_ranges

# The records are scanned in this many id ranges at once (SQLite and psycopg release the GIL
# while a query runs): at a million sessions the one scan was 4.5 s of the command's 6.5.
RANGES = 2
# Each range's distinct reviewer and model ids as one comma-separated text, per dialect.
DISTINCT_IDS = {"sqlite": "group_concat(DISTINCT {column})",
                "postgresql": "string_agg(DISTINCT CAST({column} AS TEXT), ',')"}


def _rows(db: Database, name: str, **params: Any) -> list[dict[str, Any]]:
    from sqlalchemy import text

    with db.engine.connect() as connection:
        return [dict(row._mapping) for row in connection.execute(text(read_sql(name)), params)]


def stats(db: Database) -> dict[str, Any]:
    """Totals: one scan of the records, the rest from sessions and session_stats (which
    ``council-db db check`` verifies against the records)."""
    database = db.engine.url.render_as_string(hide_password=True)  # the engine made before threads share it
    with ThreadPoolExecutor(RANGES + 1) as pool:
        versions_read = pool.submit(_rows, db, "stats_schema_versions")
        records = _record_totals(db, pool)
        versions = versions_read.result()
    sessions = _rows(db, "stats_counts", min_us=MIN_US, max_us=MAX_US)[0]
    first, last = sessions.pop("first_us"), sessions.pop("last_us")
    counts = {"records": records.pop("records"), "sessions": sessions.pop("sessions"), **records, **sessions}
    excluded = {code: sum(int(row[code]) for row in versions) for code in sorted(EXCLUSION_REASONS)}
    return {
        "database": database,
        **counts,
        "window": {"start": format_us(first), "end": format_us(last)},
        "schema_versions": {row["schema_version"]: int(row["records"]) for row in versions},
        "excluded": {code: records for code, records in excluded.items() if records},
        **({"dimensions": dimensions} if (dimensions := dimension_counts(db)) else {}),
    }


def _record_totals(db: Database, pool: ThreadPoolExecutor) -> dict[str, int]:
    """Records, reviewers, models, self-reviews and positions that are not display slots,
    from sql/stats_records.sql over RANGES id ranges read at once on ``pool``."""
    with db.reading() as reader:
        first_id, last_id = reader.rows("SELECT (SELECT MIN(id) FROM sessions), (SELECT MAX(id) FROM sessions)")[0]
    distinct = DISTINCT_IDS[db.dialect]
    sql = read_sql("stats_records").format(reviewer_ids=distinct.format(column="reviewer_id"),
                                           model_ids=distinct.format(column="model_id"))

    def read(ids: tuple[int, int]) -> dict[str, Any]:
        with db.reading() as reader:
            return reader.mapping(sql, {"first_id": ids[0], "last_id": ids[1]})

    parts = list(pool.map(read, id_ranges(first_id, last_id, RANGES)))

    def distinct_count(column: str) -> int:
        return len({int(i) for part in parts if part[column] for i in str(part[column]).split(",")})

    return {"records": sum(int(part["records"]) for part in parts),
            "reviewers": distinct_count("reviewer_ids"), "models": distinct_count("model_ids"),
            "self_reviews": sum(int(part["self_reviews"]) for part in parts),
            "position_not_display_order": sum(int(part["position_not_display_order"]) for part in parts)}


def dimension_counts(db: Database) -> dict[str, int]:
    """Each rubric dimension stored (score_dimensions), with its number of scores, by name."""
    from sqlalchemy import text

    with db.engine.connect() as connection:
        return {name: int(count) for name, count in connection.execute(text(
            "SELECT n.name, c.scores FROM (SELECT dimension_id, COUNT(*) AS scores FROM score_dimensions "
            "GROUP BY dimension_id) AS c JOIN dimension_names AS n ON n.id = c.dimension_id ORDER BY n.name"))}


def latest_sessions(db: Database, limit: int) -> list[dict[str, Any]]:
    rows = _rows(db, "sessions_latest", limit=limit)
    for row in rows:
        if row["mean_score"] is not None:
            row["mean_score"] = round(row["mean_score"], 3)
    return rows


def session_count(db: Database) -> int:
    from sqlalchemy import text

    with db.engine.connect() as connection:
        return connection.execute(text("SELECT COUNT(*) FROM sessions")).scalar_one()


def rejected_count(db: Database, import_id: int | None) -> int:
    from sqlalchemy import func, select

    from council_db.store.models import RejectedLine

    query = select(func.count()).select_from(RejectedLine)
    if import_id is not None:
        query = query.where(RejectedLine.import_id == import_id)
    with db.engine.connect() as connection:
        return connection.execute(query).scalar_one()


def rejected_lines(db: Database, import_id: int | None, limit: int) -> list[dict[str, Any]]:
    from sqlalchemy import select

    from council_db.store.models import Import, RejectedLine

    query = (
        select(RejectedLine.import_id, Import.source, RejectedLine.line_number, RejectedLine.field,
               RejectedLine.reason, RejectedLine.byte_length, RejectedLine.error_column, RejectedLine.line_hash,
               RejectedLine.unknown_keys, RejectedLine.known_values)
        .join(Import, Import.id == RejectedLine.import_id)
        .order_by(RejectedLine.import_id, RejectedLine.line_number)
        .limit(limit)
    )
    if import_id is not None:
        query = query.where(RejectedLine.import_id == import_id)
    with db.engine.connect() as connection:
        return [dict(row._mapping) for row in connection.execute(query)]
