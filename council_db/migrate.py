"""Alembic, driven from code: the migrations folder ships inside the package."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from council_db.errors import CouncilDbError, DatabaseTooNew
from council_db.resources import migrations_dir

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from sqlalchemy.engine import Engine

# The newest revision this code knows. A test keeps it equal to Alembic's head; having it
# here lets every command check an up-to-date database without loading Alembic at all.
HEAD = "0002"


def alembic_config(connection=None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


def current_revision(engine: Engine) -> str | None:
    from sqlalchemy import inspect, text

    with engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return None
        return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()


def _has_tables(engine: Engine) -> bool:
    from sqlalchemy import inspect

    with engine.connect() as connection:
        return bool(inspect(connection).get_table_names())


def refuse_unknown(revision: str, engine: Engine) -> None:
    known = {script.revision for script in scripts().walk_revisions()}
    if revision not in known:
        raise DatabaseTooNew(
            f"the database at {engine.url.render_as_string(hide_password=True)} has schema revision "
            f"{revision}, which this council-db does not know: it was written by a newer version. "
            "Upgrade council-db (pip install -U council-db); the database was left untouched."
        )


def ensure_current(engine: Engine, *, notify: Callable[[str], None]) -> None:
    """Create a new database, upgrade an old one (saying so), refuse a newer one."""
    revision = current_revision(engine)
    if revision == HEAD:
        return
    if revision is None:
        if _has_tables(engine):
            raise CouncilDbError(
                f"{engine.url.render_as_string(hide_password=True)} holds tables but no council-db "
                "schema version: it is not a council-db database. Point --db at another file."
            )
        upgrade(engine, "head")
        notify(f"created council-db database (schema {HEAD}) at {engine.url.database or engine.url}")
        return
    refuse_unknown(revision, engine)
    upgrade(engine, "head")
    notify(f"upgraded council-db database schema from {revision} to {HEAD}")


def upgrade(engine: Engine, target: str = "head") -> None:
    from alembic import command

    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), target)


def downgrade(engine: Engine, target: str) -> None:
    from alembic import command

    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), target)


def history() -> list[dict[str, str | None]]:
    """Revisions, newest first."""
    return [
        {"revision": s.revision, "down_revision": s.down_revision, "message": s.doc}
        for s in scripts().walk_revisions()
    ]
