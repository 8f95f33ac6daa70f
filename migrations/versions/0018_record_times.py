"""a record's own time as a number on its score row

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28

A judge log gives every grading its own time (FastChat's single-answer gradings, OpenAI evals'
events), so every record but its session's first had an envelope of its own: a
``record_envelopes`` row each, the import's largest cost (issue 30). ``scores.ts_us`` now holds
the time of a record whose envelope differs from its session's in nothing else (NULL: its
session's time); its text is the session's form of that number (contract.timestamps.time_text),
so export gives back the same line. A record whose envelope differs otherwise keeps its
``record_envelopes`` row, as before.

The downgrade gives each such record its envelope row back (the session's, at the record's
time) before the column goes, so every record keeps its time.
"""

import sqlalchemy as sa
from alembic import op

from council_db.contract.envelope import Envelope

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

TIMED = """
SELECT sc.session_id, sc.reviewer_id, sc.model_id, sc.position, sc.ts_us, s.timestamp, s.consent_level,
       s.schema_version, s.schema_version_raw, s.council_config_version, s.query_hash, s.query_metadata
FROM scores AS sc JOIN sessions AS s ON s.id = sc.session_id WHERE sc.ts_us IS NOT NULL
"""
ENVELOPE_COLUMNS = ("digest", "timestamp", "ts_us", "consent_level", "schema_version", "schema_version_raw",
                    "council_config_version", "query_hash", "query_metadata")


def upgrade() -> None:
    op.add_column("scores", sa.Column("ts_us", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    bind = op.get_bind()
    ids: dict[str, int] = {}
    for key_session, reviewer, model, position, ts_us, *session in bind.execute(sa.text(TIMED)).fetchall():
        timestamp, consent, version, version_raw, config, query_hash, metadata = session
        own = Envelope(timestamp, None, consent, version, version_raw, config, query_hash, metadata, None, None, None,
                       False).with_time(ts_us)
        if own.digest not in ids:
            found = bind.execute(sa.text("SELECT id FROM record_envelopes WHERE digest = :digest"),
                                 {"digest": own.digest}).scalar()
            if found is None:
                values = dict(zip(ENVELOPE_COLUMNS, (own.digest, own.timestamp, own.ts_us, *own.stored[1:])))
                bind.execute(sa.text(f"INSERT INTO record_envelopes ({', '.join(ENVELOPE_COLUMNS)}) "
                                     f"VALUES ({', '.join(':' + c for c in ENVELOPE_COLUMNS)})"), values)
                found = bind.execute(sa.text("SELECT id FROM record_envelopes WHERE digest = :digest"),
                                     {"digest": own.digest}).scalar_one()
            ids[own.digest] = found
        bind.execute(sa.text("UPDATE scores SET envelope_id = :envelope WHERE session_id = :s AND reviewer_id = :r "
                             "AND model_id = :m AND position = :p"),
                     {"envelope": ids[own.digest], "s": key_session, "r": reviewer, "m": model, "p": position})
    # ALTER TABLE DROP COLUMN (SQLite 3.35 and later), not a batch copy, as revision 0013's downgrade
    op.execute("ALTER TABLE scores DROP COLUMN ts_us")
