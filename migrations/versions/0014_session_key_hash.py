"""each session's key hash, stored: the report's sample without hashing every key per report

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28

A report on a window larger than its sample (5,000 sessions) keeps the sessions whose key's
hash is below a share of 2^32, so the same records give the same sample on any store
(issue 27). Computed per report, the hash was a Python call per session of the window on
SQLite: about 1 s of CPU at a million sessions, a third of the report's budget. Now
``sessions.key_hash`` holds it, written with the session (the first 32 bits of the MD5 of the
key's UTF-8 bytes, as ``store/key_hash``) and filled here for the sessions already stored.
Nullable, so adding it rewrites no row; no index (the sample query reads the window's sessions
anyway): about 5 bytes a session.
"""

import hashlib
import struct

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

# Written out here, not read from store/: a migration must do the same thing forever.
POSTGRESQL_FILL = "UPDATE sessions SET key_hash = ('x' || substr(md5(session_key), 1, 8))::bit(32)::bigint"
SQLITE_FILL = "UPDATE sessions SET key_hash = council_migration_key_hash(session_key)"


def _key_hash(key: str) -> int:
    return struct.unpack_from(">I", hashlib.md5(key.encode("utf-8", "surrogatepass"), usedforsecurity=False).digest())[0]


def upgrade() -> None:
    op.add_column("sessions", sa.Column("key_hash", sa.BigInteger(), nullable=True))
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        op.execute(POSTGRESQL_FILL)
        return
    bind.connection.driver_connection.create_function("council_migration_key_hash", 1, _key_hash,
                                                      deterministic=True)
    op.execute(SQLITE_FILL)


def downgrade() -> None:
    op.execute("ALTER TABLE sessions DROP COLUMN key_hash")
