"""score_records view: one readable row per score, names instead of ids

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

# The SQL is written out here, not read from sql/: a migration must build the same
# schema forever, whatever later versions of the files say.
SCORE_RECORDS = """
CREATE VIEW score_records AS
SELECT
    s.session_key AS session_id,
    s.timestamp AS timestamp,
    s.ts_us AS ts_us,
    reviewer.name AS reviewer,
    candidate.name AS model,
    sc.position AS position,
    sc.display_order AS position_is_display_order,
    sc.response_length_chars AS response_length_chars,
    sc.score_value AS score_value,
    scale.name AS score_scale,
    sc.self_review AS self_review,
    reason.code AS excluded_because,
    s.consent_level AS consent_level,
    s.schema_version AS schema_version,
    s.council_config_version AS council_config_version,
    s.category AS category,
    s.language AS language,
    s.length_bucket AS length_bucket
FROM scores AS sc
JOIN sessions AS s ON s.id = sc.session_id
JOIN models AS reviewer ON reviewer.id = sc.reviewer_id
JOIN models AS candidate ON candidate.id = sc.model_id
JOIN scales AS scale ON scale.id = sc.scale_id
LEFT JOIN exclusion_reasons AS reason ON reason.id = sc.exclusion_id
"""


def upgrade() -> None:
    op.execute(SCORE_RECORDS)


def downgrade() -> None:
    op.execute("DROP VIEW score_records")
