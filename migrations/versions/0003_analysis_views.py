"""analysis views: session summaries, within-session scores, slot means, reviewer profiles

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

# Usable scores only (kept but excluded ones are left out, as in the report). SQL is
# written out here: a migration must build the same schema forever.
VIEWS = {
    "session_summaries": """
CREATE VIEW session_summaries AS
SELECT
    s.session_key AS session_id,
    s.timestamp,
    s.ts_us,
    COUNT(*) AS records,
    SUM(CASE WHEN sc.exclusion_id IS NULL THEN 1 ELSE 0 END) AS usable,
    COUNT(DISTINCT sc.reviewer_id) AS reviewers,
    COUNT(DISTINCT sc.model_id) AS candidates,
    AVG(CASE WHEN sc.exclusion_id IS NULL THEN sc.score_value END) AS mean_score,
    MIN(CASE WHEN sc.exclusion_id IS NULL THEN sc.score_value END) AS min_score,
    MAX(CASE WHEN sc.exclusion_id IS NULL THEN sc.score_value END) AS max_score,
    SUM(CASE WHEN sc.self_review THEN 1 ELSE 0 END) AS self_reviews,
    MIN(scale.name) AS score_scale,
    s.schema_version,
    s.council_config_version,
    s.category
FROM sessions AS s
JOIN scores AS sc ON sc.session_id = s.id
JOIN scales AS scale ON scale.id = sc.scale_id
GROUP BY s.id, s.session_key, s.timestamp, s.ts_us, s.schema_version, s.council_config_version, s.category
""",
    "within_session_scores": """
CREATE VIEW within_session_scores AS
SELECT
    s.session_key AS session_id,
    s.ts_us,
    reviewer.name AS reviewer,
    candidate.name AS model,
    CASE WHEN sc.display_order THEN sc.position END AS slot,
    sc.response_length_chars,
    sc.self_review,
    scale.name AS score_scale,
    sc.score_value,
    sc.score_value - AVG(sc.score_value) OVER (PARTITION BY sc.session_id) AS score_vs_session,
    sc.score_value - AVG(sc.score_value) OVER (PARTITION BY sc.session_id, sc.model_id) AS score_vs_answer,
    sc.score_value - AVG(sc.score_value) OVER (PARTITION BY sc.session_id, sc.reviewer_id) AS score_vs_reviewer
FROM scores AS sc
JOIN sessions AS s ON s.id = sc.session_id
JOIN models AS reviewer ON reviewer.id = sc.reviewer_id
JOIN models AS candidate ON candidate.id = sc.model_id
JOIN scales AS scale ON scale.id = sc.scale_id
WHERE sc.exclusion_id IS NULL
""",
    "slot_means": """
CREATE VIEW slot_means AS
SELECT
    scale.name AS score_scale,
    sc.position AS slot,
    COUNT(*) AS records,
    COUNT(DISTINCT sc.session_id) AS sessions,
    AVG(sc.score_value) AS mean_score,
    AVG(sc.score_value * sc.score_value) - AVG(sc.score_value) * AVG(sc.score_value) AS variance
FROM scores AS sc
JOIN scales AS scale ON scale.id = sc.scale_id
WHERE sc.exclusion_id IS NULL AND sc.display_order
GROUP BY scale.name, sc.position
""",
    "reviewer_profiles": """
CREATE VIEW reviewer_profiles AS
SELECT
    reviewer.name AS reviewer,
    scale.name AS score_scale,
    COUNT(*) AS records,
    COUNT(DISTINCT sc.session_id) AS sessions,
    AVG(sc.score_value) AS raw_mean,
    AVG(sc.score_value * sc.score_value) - AVG(sc.score_value) * AVG(sc.score_value) AS raw_variance,
    SUM(CASE WHEN sc.self_review THEN 1 ELSE 0 END) AS self_reviews,
    AVG(CASE WHEN sc.self_review THEN sc.score_value END) AS mean_self_score,
    AVG(CASE WHEN NOT sc.self_review THEN sc.score_value END) AS mean_other_score
FROM scores AS sc
JOIN models AS reviewer ON reviewer.id = sc.reviewer_id
JOIN scales AS scale ON scale.id = sc.scale_id
WHERE sc.exclusion_id IS NULL
GROUP BY reviewer.name, scale.name
""",
}


def upgrade() -> None:
    for sql in VIEWS.values():
        op.execute(sql)


def downgrade() -> None:
    for name in reversed(list(VIEWS)):
        op.execute(f"DROP VIEW {name}")
