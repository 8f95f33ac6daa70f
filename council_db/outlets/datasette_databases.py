"""Which of the databases Datasette serves are council-db's, and at which schema revision."""

from __future__ import annotations

COUNCIL_TABLES = {"alembic_version", "sessions", "scores"}


async def council_revision(db) -> str | None:
    """The database's council-db schema revision; None when it is not a council-db database."""
    if db.is_memory or db.path is None:
        return None
    if not COUNCIL_TABLES <= set(await db.table_names()):
        return None
    row = (await db.execute("SELECT version_num FROM alembic_version")).first()
    return row[0] if row else None
