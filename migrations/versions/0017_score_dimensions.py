"""a rubric's dimensions: several named scores of one answer by one reviewer (issue 30)

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28

llm-council's rubric scoring, promptfoo's ``namedScores`` and Inspect's dict scores give one
answer several named scores (accuracy, relevance, ...) beside the overall one. A line carries
them as ``score_dimensions`` (name -> score on the record's scale); ``score_dimensions`` holds
one row per record and dimension, keyed by the record's key and the dimension's id, only where a
line gave some; the names are stored once in ``dimension_names``.

A dimension row goes with its record: on SQLite by a foreign key ON DELETE CASCADE (as
answer_styles, revision 0015); on PostgreSQL, which has no per-row foreign keys on these tables
(revision 0008), by a trigger once per statement.

``dimension_records`` shows them as Datasette shows records: one row per record and dimension,
with the dimension's name and score beside the record's reviewer, model and overall score.
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

KEY = ("session_id", "reviewer_id", "model_id", "position")

DIMENSIONS_GONE = """
CREATE FUNCTION council_db_score_dimensions_gone() RETURNS trigger LANGUAGE plpgsql AS $$
-- Revision 0017: a deleted record's dimensions go with it (SQLite: ON DELETE CASCADE). The
-- EXISTS keeps a deletion free where no record has dimensions (llm-council's overall scores).
BEGIN
    IF EXISTS (SELECT FROM score_dimensions) THEN
        DELETE FROM score_dimensions AS d USING removed AS r
        WHERE d.session_id = r.session_id AND d.reviewer_id = r.reviewer_id AND d.model_id = r.model_id
          AND d.position = r.position;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER scores_delete_dimensions AFTER DELETE ON scores REFERENCING OLD TABLE AS removed
FOR EACH STATEMENT EXECUTE FUNCTION council_db_score_dimensions_gone();
CREATE FUNCTION council_db_score_dimensions_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE score_dimensions;
    RETURN NULL;
END $$;
CREATE TRIGGER scores_truncate_dimensions AFTER TRUNCATE ON scores
FOR EACH STATEMENT EXECUTE FUNCTION council_db_score_dimensions_truncated();
"""

DIMENSION_RECORDS = """
CREATE VIEW dimension_records AS
SELECT
    s.session_key AS session_id,
    s.timestamp AS timestamp,
    s.ts_us AS ts_us,
    reviewer.name AS reviewer,
    reviewer.reviewer_kind AS reviewer_kind,
    candidate.name AS model,
    sc.position AS position,
    sc.display_order AS position_is_display_order,
    name.name AS dimension,
    d.score AS dimension_score,
    CASE WHEN sc.exclusion_id IS NULL THEN sc.score_value END AS score_value,
    scale.name AS score_scale,
    sc.self_review AS self_review,
    reason.code AS excluded_because,
    s.consent_level AS consent_level,
    s.category AS category,
    s.language AS language
FROM score_dimensions AS d
JOIN dimension_names AS name ON name.id = d.dimension_id
JOIN scores AS sc ON sc.session_id = d.session_id AND sc.reviewer_id = d.reviewer_id AND sc.model_id = d.model_id
                 AND sc.position = d.position
JOIN sessions AS s ON s.id = sc.session_id
JOIN models AS reviewer ON reviewer.id = sc.reviewer_id
JOIN models AS candidate ON candidate.id = sc.model_id
JOIN scales AS scale ON scale.id = sc.scale_id
LEFT JOIN exclusion_reasons AS reason ON reason.id = sc.exclusion_id
"""


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    op.create_table(
        "dimension_names",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dimension_names")),
        sa.UniqueConstraint("name", name=op.f("uq_dimension_names_name")),
    )
    references = [] if postgresql else [
        sa.ForeignKeyConstraint(list(KEY), [f"scores.{column}" for column in KEY],
                                name=op.f("fk_score_dimensions_session_id_scores"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["dimension_id"], ["dimension_names.id"],
                                name=op.f("fk_score_dimensions_dimension_id_dimension_names"))]
    op.create_table(
        "score_dimensions",
        *(sa.Column(column, sa.Integer(), nullable=False) for column in (*KEY, "dimension_id")),
        sa.Column("score", sa.Float(), nullable=False),
        *references,
        sa.PrimaryKeyConstraint(*KEY, "dimension_id", name=op.f("pk_score_dimensions")),
        sqlite_with_rowid=False,
    )
    if postgresql:
        op.execute(DIMENSIONS_GONE)
    op.execute(DIMENSION_RECORDS)


def downgrade() -> None:
    op.execute("DROP VIEW dimension_records")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER scores_delete_dimensions ON scores")
        op.execute("DROP TRIGGER scores_truncate_dimensions ON scores")
        op.execute("DROP FUNCTION council_db_score_dimensions_gone()")
        op.execute("DROP FUNCTION council_db_score_dimensions_truncated()")
    op.drop_table("score_dimensions")
    op.drop_table("dimension_names")
