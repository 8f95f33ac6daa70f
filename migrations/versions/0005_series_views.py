"""series views: daily per-reviewer scores, daily scores, candidate model profiles

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

# The UTC day of a session, per dialect (ts_us is UTC microseconds). Usable scores only and
# dated sessions only, as in the report's time windows. SQL is written out here: a migration
# must build the same schema forever.
DAY = {
    "sqlite": "date(s.ts_us / 1000000, 'unixepoch')",
    "postgresql": "to_char(to_timestamp(s.ts_us / 1000000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
}

VIEWS = {
    "reviewer_daily": """
CREATE VIEW reviewer_daily AS
SELECT
    {day} AS day,
    reviewer.name AS reviewer,
    scale.name AS score_scale,
    COUNT(*) AS records,
    COUNT(DISTINCT sc.session_id) AS sessions,
    AVG(sc.score_value) AS mean_score,
    MIN(sc.score_value) AS min_score,
    MAX(sc.score_value) AS max_score,
    SUM(CASE WHEN sc.self_review THEN 1 ELSE 0 END) AS self_reviews
FROM scores AS sc
JOIN sessions AS s ON s.id = sc.session_id
JOIN models AS reviewer ON reviewer.id = sc.reviewer_id
JOIN scales AS scale ON scale.id = sc.scale_id
WHERE sc.exclusion_id IS NULL AND s.ts_us IS NOT NULL
GROUP BY {day}, reviewer.name, scale.name
""",
    "daily_scores": """
CREATE VIEW daily_scores AS
SELECT
    {day} AS day,
    scale.name AS score_scale,
    COUNT(DISTINCT sc.session_id) AS sessions,
    COUNT(*) AS records,
    COUNT(DISTINCT sc.reviewer_id) AS reviewers,
    COUNT(DISTINCT sc.model_id) AS candidates,
    AVG(sc.score_value) AS mean_score,
    AVG(sc.response_length_chars) AS mean_length_chars
FROM scores AS sc
JOIN sessions AS s ON s.id = sc.session_id
JOIN scales AS scale ON scale.id = sc.scale_id
WHERE sc.exclusion_id IS NULL AND s.ts_us IS NOT NULL
GROUP BY {day}, scale.name
""",
    "model_profiles": """
CREATE VIEW model_profiles AS
SELECT
    candidate.name AS model,
    scale.name AS score_scale,
    COUNT(*) AS records,
    COUNT(DISTINCT sc.session_id) AS sessions,
    COUNT(DISTINCT sc.reviewer_id) AS reviewers,
    AVG(sc.score_value) AS raw_mean,
    AVG(sc.score_value * sc.score_value) - AVG(sc.score_value) * AVG(sc.score_value) AS raw_variance,
    AVG(sc.response_length_chars) AS mean_length_chars,
    AVG(CASE WHEN sc.self_review THEN sc.score_value END) AS mean_self_score,
    AVG(CASE WHEN NOT sc.self_review THEN sc.score_value END) AS mean_score_from_others
FROM scores AS sc
JOIN models AS candidate ON candidate.id = sc.model_id
JOIN scales AS scale ON scale.id = sc.scale_id
WHERE sc.exclusion_id IS NULL
GROUP BY candidate.name, scale.name
""",
}


def upgrade() -> None:
    day = DAY[op.get_bind().dialect.name]
    for sql in VIEWS.values():
        op.execute(sql.format(day=day))


def downgrade() -> None:
    for name in reversed(list(VIEWS)):
        op.execute(f"DROP VIEW {name}")
