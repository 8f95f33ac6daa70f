"""import formats and unknown answer lengths

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24

``imports.format`` names the format a file was read as (``council-db import --from``): a file
is resumed only by an import of the same format, so reading it first as the wrong one does not
hide its lines from the right one. Earlier imports were all llm-council's.

``session_stats.known_lengths`` counts a session's usable scores whose answer length is known
(a judge log imported without its answers stores -1): the naive pooled length-score r sums
over those. Every score stored before this revision has its length, so it equals ``usable``.
The two views with a mean length (``daily_scores``, ``model_profiles``) leave an unknown
length (-1) out of it.
"""

import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


# The UTC day of a session, per dialect, as in 0005. SQL is written out here: a migration must
# build the same schema forever.
DAY = {
    "sqlite": "date(s.ts_us / 1000000, 'unixepoch')",
    "postgresql": "to_char(to_timestamp(s.ts_us / 1000000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
}
KNOWN_MEAN = "AVG(CASE WHEN sc.response_length_chars >= 0 THEN sc.response_length_chars END)"
OLD_MEAN = "AVG(sc.response_length_chars)"
VIEWS = {
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
    {mean} AS mean_length_chars
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
    {mean} AS mean_length_chars,
    AVG(CASE WHEN sc.self_review THEN sc.score_value END) AS mean_self_score,
    AVG(CASE WHEN NOT sc.self_review THEN sc.score_value END) AS mean_score_from_others
FROM scores AS sc
JOIN models AS candidate ON candidate.id = sc.model_id
JOIN scales AS scale ON scale.id = sc.scale_id
WHERE sc.exclusion_id IS NULL
GROUP BY candidate.name, scale.name
""",
}


def _views(mean: str) -> None:
    day = DAY[op.get_bind().dialect.name]
    for name, sql in VIEWS.items():
        op.execute(f"DROP VIEW {name}")
        op.execute(sql.format(day=day, mean=mean))


def upgrade() -> None:
    op.add_column('imports', sa.Column('format', sa.String(length=32), server_default='llm-council', nullable=False))
    op.add_column('session_stats', sa.Column('known_lengths', sa.Integer(), server_default='0', nullable=False))
    op.execute('UPDATE session_stats SET known_lengths = usable')
    _views(KNOWN_MEAN)


def downgrade() -> None:
    _views(OLD_MEAN)
    # ALTER TABLE DROP COLUMN (SQLite 3.35 and later), not a batch copy: rebuilding imports would
    # delete its rejected lines (ON DELETE CASCADE) and unlink its sessions.
    op.execute('ALTER TABLE session_stats DROP COLUMN known_lengths')
    op.execute('ALTER TABLE imports DROP COLUMN format')
