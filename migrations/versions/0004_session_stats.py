"""session_stats: per-session sufficient statistics, kept at import time

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

# Written out here, not read from sql/session_stats.sql: a migration must do the same
# thing forever, whatever later versions of that file say.
BACKFILL = """
WITH answers AS (
    SELECT session_id, scale_id, ln(response_length_chars + 1.0) AS x, AVG(score_value) AS y
    FROM scores
    WHERE session_id BETWEEN :first AND :last AND exclusion_id IS NULL AND NOT self_review
    GROUP BY session_id, scale_id, model_id, response_length_chars
), centred AS (
    SELECT session_id, scale_id,
           x - AVG(x) OVER (PARTITION BY session_id, scale_id) AS dx,
           y - AVG(y) OVER (PARTITION BY session_id, scale_id) AS dy
    FROM answers
), answer_moments AS (
    SELECT session_id, scale_id, COUNT(*) AS answers,
           SUM(dx * dx) AS answer_sxx, SUM(dy * dy) AS answer_syy, SUM(dx * dy) AS answer_sxy
    FROM centred
    GROUP BY session_id, scale_id
), record_sums AS (
    SELECT session_id, scale_id,
           COUNT(*) AS records,
           SUM(CASE WHEN exclusion_id IS NULL THEN 1 ELSE 0 END) AS usable,
           SUM(CASE WHEN exclusion_id = 1 THEN 1 ELSE 0 END) AS unscored,
           SUM(CASE WHEN exclusion_id = 2 THEN 1 ELSE 0 END) AS out_of_scale,
           SUM(CASE WHEN exclusion_id IS NULL THEN score_value ELSE 0 END) AS score_sum,
           SUM(CASE WHEN exclusion_id IS NULL THEN score_value * score_value ELSE 0 END) AS score_sq_sum,
           SUM(CASE WHEN exclusion_id IS NULL THEN response_length_chars ELSE 0 END) AS length_sum,
           SUM(CASE WHEN exclusion_id IS NULL
                    THEN 1.0 * response_length_chars * response_length_chars ELSE 0 END) AS length_sq_sum,
           SUM(CASE WHEN exclusion_id IS NULL
                    THEN response_length_chars * score_value ELSE 0 END) AS length_score_sum
    FROM scores
    WHERE session_id BETWEEN :first AND :last
    GROUP BY session_id, scale_id
)
INSERT INTO session_stats (
    session_id, scale_id, records, usable, unscored, out_of_scale,
    score_sum, score_sq_sum, length_sum, length_sq_sum, length_score_sum,
    answers, answer_sxx, answer_syy, answer_sxy, answer_z
)
SELECT r.session_id, r.scale_id, r.records, r.usable, r.unscored, r.out_of_scale,
       r.score_sum, r.score_sq_sum, r.length_sum, r.length_sq_sum, r.length_score_sum,
       COALESCE(a.answers, 0), COALESCE(a.answer_sxx, 0), COALESCE(a.answer_syy, 0), COALESCE(a.answer_sxy, 0),
       CASE WHEN a.answers >= 4 AND a.answer_sxx > 0 AND a.answer_syy > 0
                 AND abs(a.answer_sxy) < sqrt(a.answer_sxx * a.answer_syy)
            THEN atanh(a.answer_sxy / sqrt(a.answer_sxx * a.answer_syy)) END
FROM record_sums AS r
LEFT JOIN answer_moments AS a ON a.session_id = r.session_id AND a.scale_id = r.scale_id
"""


def upgrade() -> None:
    op.create_table(
        "session_stats",
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("scale_id", sa.Integer(), nullable=False),
        sa.Column("records", sa.Integer(), nullable=False),
        sa.Column("usable", sa.Integer(), nullable=False),
        sa.Column("unscored", sa.Integer(), nullable=False),
        sa.Column("out_of_scale", sa.Integer(), nullable=False),
        sa.Column("score_sum", sa.Float(), nullable=False),
        sa.Column("score_sq_sum", sa.Float(), nullable=False),
        sa.Column("length_sum", sa.Float(), nullable=False),
        sa.Column("length_sq_sum", sa.Float(), nullable=False),
        sa.Column("length_score_sum", sa.Float(), nullable=False),
        sa.Column("answers", sa.Integer(), nullable=False),
        sa.Column("answer_sxx", sa.Float(), nullable=False),
        sa.Column("answer_syy", sa.Float(), nullable=False),
        sa.Column("answer_sxy", sa.Float(), nullable=False),
        sa.Column("answer_z", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["scale_id"], ["scales.id"], name=op.f("fk_session_stats_scale_id_scales")),
        sa.ForeignKeyConstraint(["session_id"], ["sessions.id"], name=op.f("fk_session_stats_session_id_sessions"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("session_id", "scale_id", name=op.f("pk_session_stats")),
        sqlite_with_rowid=False,
    )
    bind = op.get_bind()
    first, last = bind.execute(sa.text("SELECT MIN(id), MAX(id) FROM sessions")).one()
    if first is not None:
        bind.execute(sa.text(BACKFILL), {"first": first, "last": last})


def downgrade() -> None:
    op.drop_table("session_stats")
