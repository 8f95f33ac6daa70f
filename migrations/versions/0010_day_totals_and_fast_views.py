"""day totals for the views; views that answer at a million sessions; score_value NULL when excluded

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24

The aggregate views grouped every record on each query: 10-30 s at a million sessions, where
Datasette stops a query after 1 s (issue 19). They now sum small tables of totals per UTC day
(reviewer_day_totals, model_day_totals, pair_day_totals, day_totals, slot_day_totals), which
the importer keeps in its transaction (store/day_totals.py) and this revision fills from the
stored records. The views over records page: each row's session means come from a correlated
subquery over the session's own rows (not a window over every record), and on SQLite every
looked-up column is a subquery that a count or a facet does not evaluate.

score_records gives score_value NULL for an excluded score, so AVG(score_value) is the mean of
the usable scores; the stored value is its stored_score_value.

On PostgreSQL a DELETE of sessions or scores counts the totals of the days it touched again
(statement-level triggers); on SQLite `council-db db check` finds totals that an edit by hand
made stale, and --repair rebuilds them.
"""

import re

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

# Written out here, not read from sql/ or store/: a migration must do the same thing forever.
WRITE_LOCK_KEY = 27988572848220524  # store/database.py's
# A session's day: its UTC date as a day number, 1 = 0001-01-01 (the earliest time stored),
# in integer arithmetic on both databases; 0 when the session has no time.
DAY = "COALESCE((ts_us + 62135596800000000) / 86400000000 + 1, 0)"
ALL_SESSIONS = f"SELECT id, {DAY} AS day FROM sessions"
# The day label of a views' row, per dialect.
DAY_LABEL = {"sqlite": "date(t.day + 1721424.5)",
             "postgresql": "to_char(DATE '0001-01-01' + (t.day - 1)::integer, 'YYYY-MM-DD')"}

# (table, key, integer columns, float columns)
SCHEMA = (
    ("reviewer_day_totals", ("day", "reviewer_id", "scale_id"),
     ("sessions", "records", "self_reviews"), ("score_sum", "score_sq_sum", "self_score_sum", "min_score", "max_score")),
    ("model_day_totals", ("day", "model_id", "scale_id"),
     ("sessions", "records", "self_reviews", "known_lengths"),
     ("score_sum", "score_sq_sum", "self_score_sum", "length_sum")),
    ("pair_day_totals", ("day", "reviewer_id", "model_id", "scale_id"), ("records",), ()),
    ("day_totals", ("day", "scale_id"), ("sessions", "records", "known_lengths"), ("score_sum", "length_sum")),
    ("slot_day_totals", ("day", "scale_id", "slot"), ("sessions", "records"), ("score_sum", "score_sq_sum")),
)
COLUMNS = {table: ", ".join(key + counts + sums) for table, key, counts, sums in SCHEMA}
# Each table's rows (in COLUMNS order) over {sessions}: the (id, day) of the sessions to count.
_USABLE = "FROM ({sessions}) AS d JOIN scores AS sc ON sc.session_id = d.id WHERE sc.exclusion_id IS NULL"
_SELF = "SUM(CASE WHEN sc.self_review THEN 1 ELSE 0 END)"
_SELF_SUM = "SUM(CASE WHEN sc.self_review THEN sc.score_value ELSE 0 END)"
_SUMS = "SUM(sc.score_value), SUM(sc.score_value * sc.score_value)"
# An answer length of -1 is unknown (revision 0009): counted apart, and out of the length sums.
_KNOWN = "SUM(CASE WHEN sc.response_length_chars >= 0 THEN 1 ELSE 0 END)"
_LENGTH_SUM = "SUM(CASE WHEN sc.response_length_chars >= 0 THEN sc.response_length_chars ELSE 0 END)"
TOTALS = {
    "reviewer_day_totals":
        f"SELECT d.day, sc.reviewer_id, sc.scale_id, COUNT(DISTINCT sc.session_id), COUNT(*), {_SELF}, {_SUMS}, "
        f"{_SELF_SUM}, MIN(sc.score_value), MAX(sc.score_value) {_USABLE} GROUP BY d.day, sc.reviewer_id, sc.scale_id",
    "model_day_totals":
        f"SELECT d.day, sc.model_id, sc.scale_id, COUNT(DISTINCT sc.session_id), COUNT(*), {_SELF}, {_KNOWN}, "
        f"{_SUMS}, {_SELF_SUM}, {_LENGTH_SUM} {_USABLE} GROUP BY d.day, sc.model_id, sc.scale_id",
    "pair_day_totals":
        f"SELECT d.day, sc.reviewer_id, sc.model_id, sc.scale_id, COUNT(*) {_USABLE} "
        "GROUP BY d.day, sc.reviewer_id, sc.model_id, sc.scale_id",
    "day_totals":
        f"SELECT d.day, sc.scale_id, COUNT(DISTINCT sc.session_id), COUNT(*), {_KNOWN}, SUM(sc.score_value), "
        f"{_LENGTH_SUM} {_USABLE} GROUP BY d.day, sc.scale_id",
    "slot_day_totals":
        f"SELECT d.day, sc.scale_id, sc.position, COUNT(DISTINCT sc.session_id), COUNT(*), {_SUMS} "
        f"{_USABLE} AND sc.display_order GROUP BY d.day, sc.scale_id, sc.position",
}

# The views over records, per dialect. SQLite keeps a LEFT JOIN in an aggregate query even when
# none of its columns is asked for (Datasette's row count and facets), so there every looked-up
# column is a correlated subquery, evaluated only for the rows and columns a query uses. The
# reviewer stays joined: with an index on scores (reviewer_id, exclusion_id), which a user may
# add (docs/storage.md), a facet on reviewer counts its entries in name order without a sort.
# PostgreSQL leaves out an unused LEFT JOIN itself.
_SESSION = "(SELECT s.{column} FROM sessions AS s WHERE s.id = sc.session_id)"
_LOOKED_UP = {
    "sqlite": {
        **{f"s.{name}": _SESSION.format(column=name) for name in (
            "session_key", "timestamp", "ts_us", "consent_level", "schema_version", "council_config_version",
            "category", "language", "length_bucket")},
        "candidate.name": "(SELECT candidate.name FROM models AS candidate WHERE candidate.id = sc.model_id)",
        "scale.name": "(SELECT scale.name FROM scales AS scale WHERE scale.id = sc.scale_id)",
        "reason.code": "(SELECT reason.code FROM exclusion_reasons AS reason WHERE reason.id = sc.exclusion_id)",
        "FROM": "FROM models AS reviewer JOIN scores AS sc ON sc.reviewer_id = reviewer.id",
    },
    "postgresql": {
        "FROM": """FROM models AS reviewer
JOIN scores AS sc ON sc.reviewer_id = reviewer.id
LEFT JOIN sessions AS s ON s.id = sc.session_id
LEFT JOIN models AS candidate ON candidate.id = sc.model_id
LEFT JOIN scales AS scale ON scale.id = sc.scale_id
LEFT JOIN exclusion_reasons AS reason ON reason.id = sc.exclusion_id""",
    },
}
_SESSION_ROWS = "FROM scores AS o WHERE o.session_id = {session}"
RECORD_VIEWS = {
    "score_records": """
CREATE VIEW score_records AS
SELECT
    <s.session_key> AS session_id,
    <s.timestamp> AS timestamp,
    <s.ts_us> AS ts_us,
    reviewer.name AS reviewer,
    <candidate.name> AS model,
    sc.position AS position,
    sc.display_order AS position_is_display_order,
    sc.response_length_chars AS response_length_chars,
    CASE WHEN sc.exclusion_id IS NULL THEN sc.score_value END AS score_value,
    <scale.name> AS score_scale,
    sc.self_review AS self_review,
    <reason.code> AS excluded_because,
    sc.score_value AS stored_score_value,
    <s.consent_level> AS consent_level,
    <s.schema_version> AS schema_version,
    <s.council_config_version> AS council_config_version,
    <s.category> AS category,
    <s.language> AS language,
    <s.length_bucket> AS length_bucket
<FROM>
""",
    "within_session_scores": f"""
CREATE VIEW within_session_scores AS
SELECT
    <s.session_key> AS session_id,
    <s.ts_us> AS ts_us,
    reviewer.name AS reviewer,
    <candidate.name> AS model,
    CASE WHEN sc.display_order THEN sc.position END AS slot,
    sc.response_length_chars,
    sc.self_review,
    <scale.name> AS score_scale,
    sc.score_value,
    sc.score_value - (SELECT AVG(o.score_value) {_SESSION_ROWS.format(session="sc.session_id")}
                      AND o.exclusion_id IS NULL) AS score_vs_session,
    sc.score_value - (SELECT AVG(o.score_value) {_SESSION_ROWS.format(session="sc.session_id")}
                      AND o.model_id = sc.model_id AND o.exclusion_id IS NULL) AS score_vs_answer,
    sc.score_value - (SELECT AVG(o.score_value) {_SESSION_ROWS.format(session="sc.session_id")}
                      AND o.reviewer_id = sc.reviewer_id AND o.exclusion_id IS NULL) AS score_vs_reviewer
<FROM>
WHERE sc.exclusion_id IS NULL
""",
}


def _record_view(sql: str, dialect: str) -> str:
    """A record view's SQL with each <looked-up column> (and <FROM>) as ``dialect`` gets it."""
    for placeholder in set(re.findall(r"<([^>]+)>", sql)):
        sql = sql.replace(f"<{placeholder}>", _LOOKED_UP[dialect].get(placeholder, placeholder))
    return sql


# The views over the day totals. Means and variances from the sums, as the old views' AVG gave them.
_MEAN = "{t}score_sum / {t}records"
_VARIANCE = "{t}score_sq_sum / {t}records - ({t}score_sum / {t}records) * ({t}score_sum / {t}records)"
VIEWS = {
    "session_summaries": f"""
CREATE VIEW session_summaries AS
SELECT
    s.session_key AS session_id,
    s.timestamp,
    s.ts_us,
    (SELECT COUNT(*) {_SESSION_ROWS.format(session="s.id")}) AS records,
    (SELECT COUNT(*) {_SESSION_ROWS.format(session="s.id")} AND o.exclusion_id IS NULL) AS usable,
    (SELECT COUNT(DISTINCT o.reviewer_id) {_SESSION_ROWS.format(session="s.id")}) AS reviewers,
    (SELECT COUNT(DISTINCT o.model_id) {_SESSION_ROWS.format(session="s.id")}) AS candidates,
    (SELECT AVG(o.score_value) {_SESSION_ROWS.format(session="s.id")} AND o.exclusion_id IS NULL) AS mean_score,
    (SELECT MIN(o.score_value) {_SESSION_ROWS.format(session="s.id")} AND o.exclusion_id IS NULL) AS min_score,
    (SELECT MAX(o.score_value) {_SESSION_ROWS.format(session="s.id")} AND o.exclusion_id IS NULL) AS max_score,
    (SELECT SUM(CASE WHEN o.self_review THEN 1 ELSE 0 END) {_SESSION_ROWS.format(session="s.id")}) AS self_reviews,
    (SELECT MIN(scale.name) FROM scores AS o JOIN scales AS scale ON scale.id = o.scale_id
     WHERE o.session_id = s.id) AS score_scale,
    s.schema_version,
    s.council_config_version,
    s.category
FROM sessions AS s
WHERE EXISTS (SELECT 1 {_SESSION_ROWS.format(session="s.id")})
""",
    "slot_means": f"""
CREATE VIEW slot_means AS
SELECT
    scale.name AS score_scale,
    t.slot,
    t.records,
    t.sessions,
    {_MEAN.format(t="t.")} AS mean_score,
    {_VARIANCE.format(t="t.")} AS variance
FROM (SELECT scale_id, slot, SUM(records) AS records, SUM(sessions) AS sessions, SUM(score_sum) AS score_sum,
             SUM(score_sq_sum) AS score_sq_sum
      FROM slot_day_totals GROUP BY scale_id, slot) AS t
JOIN scales AS scale ON scale.id = t.scale_id
""",
    "reviewer_profiles": f"""
CREATE VIEW reviewer_profiles AS
SELECT
    reviewer.name AS reviewer,
    scale.name AS score_scale,
    t.records,
    t.sessions,
    {_MEAN.format(t="t.")} AS raw_mean,
    {_VARIANCE.format(t="t.")} AS raw_variance,
    t.self_reviews,
    t.self_score_sum / NULLIF(t.self_reviews, 0) AS mean_self_score,
    (t.score_sum - t.self_score_sum) / NULLIF(t.records - t.self_reviews, 0) AS mean_other_score
FROM (SELECT reviewer_id, scale_id, SUM(records) AS records, SUM(sessions) AS sessions, SUM(score_sum) AS score_sum,
             SUM(score_sq_sum) AS score_sq_sum, SUM(self_reviews) AS self_reviews,
             SUM(self_score_sum) AS self_score_sum
      FROM reviewer_day_totals GROUP BY reviewer_id, scale_id) AS t
JOIN models AS reviewer ON reviewer.id = t.reviewer_id
JOIN scales AS scale ON scale.id = t.scale_id
""",
    "reviewer_daily": """
CREATE VIEW reviewer_daily AS
SELECT
    {day} AS day,
    reviewer.name AS reviewer,
    scale.name AS score_scale,
    t.records,
    t.sessions,
    t.score_sum / t.records AS mean_score,
    t.min_score,
    t.max_score,
    t.self_reviews
FROM reviewer_day_totals AS t
JOIN models AS reviewer ON reviewer.id = t.reviewer_id
JOIN scales AS scale ON scale.id = t.scale_id
WHERE t.day > 0
""",
    "daily_scores": """
CREATE VIEW daily_scores AS
SELECT
    {day} AS day,
    scale.name AS score_scale,
    t.sessions,
    t.records,
    (SELECT COUNT(*) FROM reviewer_day_totals AS r WHERE r.day = t.day AND r.scale_id = t.scale_id) AS reviewers,
    (SELECT COUNT(*) FROM model_day_totals AS m WHERE m.day = t.day AND m.scale_id = t.scale_id) AS candidates,
    t.score_sum / t.records AS mean_score,
    t.length_sum / NULLIF(t.known_lengths, 0) AS mean_length_chars
FROM day_totals AS t
JOIN scales AS scale ON scale.id = t.scale_id
WHERE t.day > 0
""",
    "model_profiles": f"""
CREATE VIEW model_profiles AS
SELECT
    candidate.name AS model,
    scale.name AS score_scale,
    t.records,
    t.sessions,
    p.reviewers,
    {_MEAN.format(t="t.")} AS raw_mean,
    {_VARIANCE.format(t="t.")} AS raw_variance,
    t.length_sum / NULLIF(t.known_lengths, 0) AS mean_length_chars,
    t.self_score_sum / NULLIF(t.self_reviews, 0) AS mean_self_score,
    (t.score_sum - t.self_score_sum) / NULLIF(t.records - t.self_reviews, 0) AS mean_score_from_others
FROM (SELECT model_id, scale_id, SUM(records) AS records, SUM(sessions) AS sessions, SUM(score_sum) AS score_sum,
             SUM(score_sq_sum) AS score_sq_sum, SUM(self_reviews) AS self_reviews,
             SUM(self_score_sum) AS self_score_sum, SUM(length_sum) AS length_sum,
             SUM(known_lengths) AS known_lengths
      FROM model_day_totals GROUP BY model_id, scale_id) AS t
JOIN (SELECT model_id, scale_id, COUNT(DISTINCT reviewer_id) AS reviewers
      FROM pair_day_totals GROUP BY model_id, scale_id) AS p ON p.model_id = t.model_id AND p.scale_id = t.scale_id
JOIN models AS candidate ON candidate.id = t.model_id
JOIN scales AS scale ON scale.id = t.scale_id
""",
}

# PostgreSQL: a DELETE of sessions or scores by hand counts the totals of its days again.
_DAY_SESSIONS = (
    "SELECT s.id, d.day FROM unnest(days) AS d(day) JOIN sessions AS s "
    "ON s.ts_us >= (d.day - 1) * 86400000000 - 62135596800000000 AND s.ts_us < d.day * 86400000000 - 62135596800000000 "
    "UNION ALL SELECT id, 0 FROM sessions WHERE ts_us IS NULL AND 0 = ANY(days)")
FUNCTIONS = f"""
CREATE FUNCTION council_db_count_days(days bigint[]) RETURNS void LANGUAGE plpgsql AS $$
-- Revision 0010: the day totals of these days, counted again from the records.
BEGIN
{"".join(f'''    DELETE FROM {table} WHERE day = ANY(days);
    INSERT INTO {table} ({COLUMNS[table]}) {select.format(sessions=_DAY_SESSIONS)};
''' for table, select in TOTALS.items())}END $$;

CREATE FUNCTION council_db_sessions_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock({WRITE_LOCK_KEY});
    PERFORM council_db_count_days(ARRAY(SELECT DISTINCT {DAY} FROM removed));
    RETURN NULL;
END $$;

CREATE FUNCTION council_db_scores_removed() RETURNS trigger LANGUAGE plpgsql AS $$
-- Scores deleted with their sessions find no session here: the sessions' trigger counts them.
BEGIN
    PERFORM pg_advisory_xact_lock({WRITE_LOCK_KEY});
    PERFORM council_db_count_days(ARRAY(SELECT DISTINCT {DAY} FROM sessions
                                        WHERE id IN (SELECT DISTINCT session_id FROM removed)));
    RETURN NULL;
END $$;

CREATE TRIGGER sessions_deleted_totals AFTER DELETE ON sessions REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION council_db_sessions_removed();
CREATE TRIGGER scores_deleted_totals AFTER DELETE ON scores REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION council_db_scores_removed();
"""


def _create_tables() -> None:
    import sqlalchemy as sa

    for table, key, counts, sums in SCHEMA:
        op.create_table(
            table,
            *(sa.Column(name, sa.Integer(), autoincrement=False, nullable=False) for name in key + counts),
            *(sa.Column(name, sa.Float(), nullable=False) for name in sums),
            sa.PrimaryKeyConstraint(*key, name=op.f(f"pk_{table}")),
            sqlite_with_rowid=False,
        )


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    _create_tables()
    for table, select in TOTALS.items():
        op.execute(f"INSERT INTO {table} ({COLUMNS[table]}) {select.format(sessions=ALL_SESSIONS)}")
    for name in (*RECORD_VIEWS, *VIEWS):
        op.execute(f"DROP VIEW {name}")
    for sql in RECORD_VIEWS.values():
        op.execute(_record_view(sql, dialect))
    for sql in VIEWS.values():
        op.execute(sql.format(day=DAY_LABEL[dialect]))
    if dialect == "postgresql":
        op.execute(FUNCTIONS)


def _older(revision: str):
    """An earlier revision's module, for the SQL of the views it made (never changed since)."""
    from alembic import context

    return context.script.get_revision(revision).module


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute("DROP TRIGGER scores_deleted_totals ON scores")
        op.execute("DROP TRIGGER sessions_deleted_totals ON sessions")
        for function in ("council_db_scores_removed()", "council_db_sessions_removed()",
                         "council_db_count_days(bigint[])"):
            op.execute(f"DROP FUNCTION {function}")
    for name in (*RECORD_VIEWS, *VIEWS):
        op.execute(f"DROP VIEW {name}")
    op.execute(_older("0002").SCORE_RECORDS)
    for sql in _older("0003").VIEWS.values():
        op.execute(sql)
    series = _older("0005")
    for sql in series.VIEWS.values():
        op.execute(sql.format(day=series.DAY[dialect]))
    lengths = _older("0009")  # its two views with a mean length leave unknown lengths out
    for name, sql in lengths.VIEWS.items():
        op.execute(f"DROP VIEW {name}")
        op.execute(sql.format(day=lengths.DAY[dialect], mean=lengths.KNOWN_MEAN))
    for table, *_ in reversed(SCHEMA):
        op.drop_table(table)
