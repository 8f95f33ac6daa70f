"""record views that find one session by its key; an index of the excluded scores

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24

On SQLite, 0010's score_records and within_session_scores looked up every session column in a
correlated subquery, so a filter on session_id (`?session_id=` in Datasette, or
`WHERE session_id = '...'`) evaluated it for every record: 4 s at a million sessions. They
now join sessions, and such a filter reads the session by its unique key and its records by
the scores' primary key. The reviewer's name is looked up like the candidate's, so a count
joins sessions only (its joined reviewer served an index on reviewer that the store does not
keep). PostgreSQL's views already joined sessions and stay as they were.

ix_scores_excluded indexes the excluded scores only (a partial index, a few bytes for each
excluded score and none for the others): with the day totals of 0010, which count the usable
scores, it lets council-db's Datasette plugin count every record per reviewer, model and
scale without reading the records.
"""

import re

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

RECORD_VIEWS = ("score_records", "within_session_scores")
# 0010's record views (its frozen SQL) with every session column read from a joined sessions
# row. Written out here, not read from store/: a migration must do the same thing forever.
SESSION_COLUMNS = ("session_key", "timestamp", "ts_us", "consent_level", "schema_version", "council_config_version",
                   "category", "language", "length_bucket")
SQLITE_LOOKUPS = {
    **{f"s.{name}": f"s.{name}" for name in SESSION_COLUMNS},
    "FROM": "FROM sessions AS s\nJOIN scores AS sc ON sc.session_id = s.id",
}
JOINED_REVIEWER = "reviewer.name AS reviewer"  # 0010's, with the reviewer joined in its FROM
LOOKED_UP_REVIEWER = "(SELECT reviewer.name FROM models AS reviewer WHERE reviewer.id = sc.reviewer_id) AS reviewer"
EXCLUDED_INDEX = "CREATE INDEX ix_scores_excluded ON scores (reviewer_id, model_id, scale_id) WHERE exclusion_id IS NOT NULL"


def _older(revision: str):
    """An earlier revision's module, for the SQL of the views it made (never changed since)."""
    from alembic import context

    return context.script.get_revision(revision).module


def _record_views(lookups: dict[str, str]) -> None:
    """Make the record views again from 0010's SQL, with ``lookups`` over its SQLite ones (and,
    with any, the reviewer looked up rather than joined)."""
    views = _older("0010")
    looked_up = {**views._LOOKED_UP["sqlite"], **lookups}
    for name in RECORD_VIEWS:
        sql = views.RECORD_VIEWS[name]
        if lookups:
            sql = sql.replace(JOINED_REVIEWER, LOOKED_UP_REVIEWER)
        for placeholder in set(re.findall(r"<([^>]+)>", sql)):
            sql = sql.replace(f"<{placeholder}>", looked_up.get(placeholder, placeholder))
        op.execute(f"DROP VIEW {name}")
        op.execute(sql)


def upgrade() -> None:
    op.execute(EXCLUDED_INDEX)
    if op.get_bind().dialect.name == "sqlite":
        _record_views(SQLITE_LOOKUPS)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _record_views({})
    op.execute("DROP INDEX ix_scores_excluded")
