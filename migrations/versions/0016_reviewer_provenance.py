"""who the judge really was: a reviewer's prompt template, temperature and seed (issue 30)

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-28

A reviewer is its model plus, where a log says so, the prompt template it was given and its
sampling settings: two prompts of one model are two reviewers in every analysis. Such a
reviewer is a row of ``models`` named by its identity's label (contract/reviewer_identity:
"gpt-4 · prompt single-v1 · T=0 · seed 7") whose ``model_of`` is its model's row and whose
``prompt``, ``temperature`` and ``seed`` say the rest (NULL: not said). A record points at it
as at any reviewer, so it costs no byte more, and a reviewer without provenance is its model's
row as before (every column NULL). ``reviewer_identities`` shows each such reviewer with its
model's name, for Datasette and SQL.
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

COLUMNS = (("model_of", sa.Integer()), ("prompt", sa.Text()), ("temperature", sa.Float()),
           ("seed", sa.BigInteger()))

IDENTITIES_VIEW = """
CREATE VIEW reviewer_identities AS
SELECT reviewer.name AS reviewer,
       model.name AS model,
       reviewer.prompt AS prompt,
       reviewer.temperature AS temperature,
       reviewer.seed AS seed,
       reviewer.reviewer_kind AS reviewer_kind
FROM models AS reviewer
JOIN models AS model ON model.id = reviewer.model_of
"""


def upgrade() -> None:
    for name, kind in COLUMNS:
        op.add_column("models", sa.Column(name, kind, nullable=True))
    op.execute(IDENTITIES_VIEW)


def downgrade() -> None:
    # A reviewer with provenance stays a reviewer named by its label. ALTER TABLE ... DROP
    # COLUMN on both backends (SQLite >= 3.35): a copied models table would break the views on it.
    op.execute("DROP VIEW reviewer_identities")
    for name, _ in reversed(COLUMNS):
        op.drop_column("models", name)
