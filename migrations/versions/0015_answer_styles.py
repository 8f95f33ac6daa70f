"""the answer's style where a format carries it: tokens and markdown counts (issue 29)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-28

Arena-hard's answers come with their length in tokens and their markdown headers, list items
and bold spans; style control (a Bradley-Terry model with these as covariates) needs them.
``answer_styles`` holds them per record, on the record's own key, only where a line gave some
(NULL: unknown, never 0). A separate table, not four columns of ``scores``: llm-council's
records carry none, and pay no byte for them (the 1 KB-a-session budget).

A style row goes with its record: on SQLite by a foreign key ON DELETE CASCADE (its key is the
child table's primary key, so each deleted record costs one look-up); on PostgreSQL, which has
no per-row foreign keys on these tables (revision 0008), by a trigger once per statement.

``score_records`` shows the four after ``response_length_chars`` (NULL: unknown): on SQLite
looked up per row like the view's other columns (revision 0010: a count or a facet does not
evaluate them), on PostgreSQL by a LEFT JOIN on the table's key, which the planner leaves out
when no style column is asked for.
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

KEY = ("session_id", "reviewer_id", "model_id", "position")
STYLE = ("response_tokens", "markdown_headers", "markdown_lists", "markdown_bold")
ON_KEY = " AND ".join(f"st.{column} = sc.{column}" for column in KEY)
LENGTH = "sc.response_length_chars AS response_length_chars,"  # the view's column the style follows

STYLES_GONE = """
CREATE FUNCTION council_db_answer_styles_gone() RETURNS trigger LANGUAGE plpgsql AS $$
-- Revision 0015: a deleted record's style goes with it (SQLite: ON DELETE CASCADE). The
-- EXISTS keeps a deletion free where no answer has a style (llm-council's data).
BEGIN
    IF EXISTS (SELECT FROM answer_styles) THEN
        DELETE FROM answer_styles AS st USING removed AS r
        WHERE st.session_id = r.session_id AND st.reviewer_id = r.reviewer_id AND st.model_id = r.model_id
          AND st.position = r.position;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER scores_delete_styles AFTER DELETE ON scores REFERENCING OLD TABLE AS removed
FOR EACH STATEMENT EXECUTE FUNCTION council_db_answer_styles_gone();
CREATE FUNCTION council_db_answer_styles_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE answer_styles;
    RETURN NULL;
END $$;
CREATE TRIGGER scores_truncate_styles AFTER TRUNCATE ON scores
FOR EACH STATEMENT EXECUTE FUNCTION council_db_answer_styles_truncated();
"""


def _older(revision: str):
    """An earlier revision's module, for the SQL of the views it made (never changed since)."""
    from alembic import context

    return context.script.get_revision(revision).module


def _score_records(styles: bool) -> None:
    """score_records as revision 0012 made it, with (``styles``) or without the style columns."""
    dialect = op.get_bind().dialect.name
    kinds, lookups = _older("0012"), _older("0011")
    sqlite = dialect == "sqlite"
    reviewer = lookups.LOOKED_UP_REVIEWER if sqlite else kinds.JOINED_REVIEWER
    sql = kinds._with_kind(kinds._record_view_sql("score_records", dialect), reviewer,
                           kinds.LOOKED_UP_KIND if sqlite else kinds.JOINED_KIND)
    if styles:
        assert sql.count(LENGTH) == 1, "score_records names the answer's length once"
        columns = ",\n    ".join(f"(SELECT st.{name} FROM answer_styles AS st WHERE {ON_KEY}) AS {name}" if sqlite
                                  else f"st.{name} AS {name}" for name in STYLE)
        sql = sql.replace(LENGTH, f"{LENGTH}\n    {columns},")
        if not sqlite:
            sql = sql.rstrip() + f"\nLEFT JOIN answer_styles AS st ON {ON_KEY}\n"
    op.execute("DROP VIEW score_records")
    op.execute(sql)


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    references = [] if postgresql else [sa.ForeignKeyConstraint(
        list(KEY), [f"scores.{column}" for column in KEY], name=op.f("fk_answer_styles_session_id_scores"),
        ondelete="CASCADE")]
    op.create_table(
        "answer_styles",
        *(sa.Column(column, sa.Integer(), nullable=False) for column in KEY),
        sa.Column("response_tokens", sa.Integer(), nullable=True),
        sa.Column("markdown_headers", sa.Integer(), nullable=True),
        sa.Column("markdown_lists", sa.Integer(), nullable=True),
        sa.Column("markdown_bold", sa.Integer(), nullable=True),
        *references,
        sa.PrimaryKeyConstraint(*KEY, name=op.f("pk_answer_styles")),
        sqlite_with_rowid=False,
    )
    if postgresql:
        op.execute(STYLES_GONE)
    _score_records(styles=True)


def downgrade() -> None:
    _score_records(styles=False)
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER scores_delete_styles ON scores")
        op.execute("DROP TRIGGER scores_truncate_styles ON scores")
        op.execute("DROP FUNCTION council_db_answer_styles_gone()")
        op.execute("DROP FUNCTION council_db_answer_styles_truncated()")
    op.drop_table("answer_styles")
