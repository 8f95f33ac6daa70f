"""the state of council-db watch: each rule outcome's last status per watch (issue 31)

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28

`council-db watch` sends a webhook when a rule of `council-db check` starts failing or recovers,
once per change. ``watch_state`` keeps, per watch (its name and its webhook's fingerprint: never
the URL), rule and subject, the last status the watch acted on, when it changed, and when the
webhook accepted the alert for it (store/watch_models.py).
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "watch_state",
        sa.Column("watch", sa.Text(), nullable=False),
        sa.Column("endpoint", sa.String(length=16), nullable=False),
        sa.Column("rule", sa.Text(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=4), nullable=False),
        sa.Column("changed_at", sa.DateTime(), nullable=False),
        sa.Column("sent_at", sa.DateTime(), nullable=True),
        sa.Column("alert_id", sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint("watch", "endpoint", "rule", "subject", name=op.f("pk_watch_state")),
    )


def downgrade() -> None:
    op.drop_table("watch_state")
