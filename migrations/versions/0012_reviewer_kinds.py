"""reviewer kinds: an LLM judge, a human rater or a gold label

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25

``models.reviewer_kind`` says whose verdicts a reviewer's records are: ``judge`` (an LLM, the
default, which every reviewer stored before this revision is), ``human`` (a person rating the
same sessions) or ``gold`` (a known right answer, such as LLMBar's or JudgeBench's label). The
agreement analyses of issue 28 compare each judge with them. A column of ``models``, which
holds reviewer and candidate names alike, so it costs nothing per record.

The views that name a reviewer show its kind beside it: score_records and within_session_scores
(on SQLite looked up like the reviewer's name, so a count or a facet does not evaluate it),
reviewer_profiles and reviewer_daily.
"""

import re

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

# Written out here, not read from store/: a migration must do the same thing forever.
ADD_COLUMN = ("ALTER TABLE models ADD COLUMN reviewer_kind TEXT DEFAULT 'judge' NOT NULL "
              "CONSTRAINT ck_models_reviewer_kind CHECK (reviewer_kind IN ('judge', 'human', 'gold'))")
RECORD_VIEWS = ("score_records", "within_session_scores")
PROFILE_VIEWS = ("reviewer_profiles", "reviewer_daily")
JOINED_REVIEWER = "reviewer.name AS reviewer"  # 0010's, in every view that names a reviewer
JOINED_KIND = "reviewer.reviewer_kind AS reviewer_kind"
LOOKED_UP_KIND = ("(SELECT reviewer.reviewer_kind FROM models AS reviewer WHERE reviewer.id = sc.reviewer_id) "
                  "AS reviewer_kind")


def _older(revision: str):
    """An earlier revision's module, for the SQL of the views it made (never changed since)."""
    from alembic import context

    return context.script.get_revision(revision).module


def _with_kind(sql: str, reviewer: str, kind: str) -> str:
    """A view's SQL with the reviewer's kind as the column after the reviewer's name."""
    assert sql.count(f"{reviewer},") == 1, "the view names its reviewer once"
    return sql.replace(f"{reviewer},", f"{reviewer},\n    {kind},")


def _record_view_sql(name: str, dialect: str) -> str:
    """A record view as 0011 left it on ``dialect``: 0010's SQL, with 0011's look-ups on SQLite."""
    views, lookups = _older("0010"), _older("0011")
    sql = views.RECORD_VIEWS[name]
    if dialect != "sqlite":
        return views._record_view(sql, dialect)
    looked_up = {**views._LOOKED_UP["sqlite"], **lookups.SQLITE_LOOKUPS}
    sql = sql.replace(JOINED_REVIEWER, lookups.LOOKED_UP_REVIEWER)
    for placeholder in set(re.findall(r"<([^>]+)>", sql)):
        sql = sql.replace(f"<{placeholder}>", looked_up.get(placeholder, placeholder))
    return sql


def _replace_views(kinds: bool) -> None:
    """The four views that name a reviewer, with (``kinds``) or without its kind."""
    dialect = op.get_bind().dialect.name
    views, lookups = _older("0010"), _older("0011")
    reviewer = lookups.LOOKED_UP_REVIEWER if dialect == "sqlite" else JOINED_REVIEWER
    kind = LOOKED_UP_KIND if dialect == "sqlite" else JOINED_KIND
    for name in RECORD_VIEWS:
        sql = _record_view_sql(name, dialect)
        op.execute(f"DROP VIEW {name}")
        op.execute(_with_kind(sql, reviewer, kind) if kinds else sql)
    for name in PROFILE_VIEWS:
        sql = views.VIEWS[name].format(day=views.DAY_LABEL[dialect])
        op.execute(f"DROP VIEW {name}")
        op.execute(_with_kind(sql, JOINED_REVIEWER, JOINED_KIND) if kinds else sql)


def upgrade() -> None:
    op.execute(ADD_COLUMN)
    _replace_views(kinds=True)


def downgrade() -> None:
    _replace_views(kinds=False)
    # ALTER TABLE DROP COLUMN (SQLite 3.35 and later), not a batch copy: scores refer to models.
    op.execute("ALTER TABLE models DROP COLUMN reviewer_kind")
