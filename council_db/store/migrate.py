"""Alembic, driven from code: the migrations folder ships inside the package."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from council_db.errors import CouncilDbError, DatabaseTooNew
from council_db.resources import migrations_dir

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from sqlalchemy import Connection
    from sqlalchemy.engine import Engine

# The newest revision this code knows. A test keeps it equal to Alembic's head; having it
# here lets every command check an up-to-date database without loading Alembic at all.
HEAD = "0021"


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


def _read_revision(connection: Connection) -> str | None:
    from sqlalchemy import inspect, text

    if not inspect(connection).has_table("alembic_version"):
        return None
    return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return _read_revision(connection)


def _where(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)


def _check(connection: Connection, engine: Engine) -> str | None:
    """The revision of a database council-db may change; refuse anything else untouched."""
    from sqlalchemy import inspect

    revision = _read_revision(connection)
    if revision is None and set(inspect(connection).get_table_names()) - {"alembic_version"}:
        raise CouncilDbError(
            f"{_where(engine)} holds tables but no council-db schema version: it is not a "
            "council-db database, and it was left untouched. Point --db at another file or database."
        )
    if revision is not None and revision not in {s.revision for s in scripts().walk_revisions()}:
        raise DatabaseTooNew(
            f"the database at {_where(engine)} has schema revision {revision}, which this "
            "council-db does not know: it was written by a newer version. Upgrade council-db "
            "(pip install -U council-db); the database was left untouched."
        )
    return revision


def _migrate(engine: Engine, target: str, step: Callable) -> tuple[str | None, str | None]:
    """Run an Alembic command under the write lock (see database.py), re-checking the revision
    inside it so two processes opening a new database at once do the work once. Returns
    (before, after)."""
    with engine.connect().execution_options(write_lock=True) as connection:
        with connection.begin():
            before = _check(connection, engine)
            if not (target == "head" and before == HEAD):
                step(alembic_config(connection), target)
            after = _read_revision(connection)
    return before, after


def upgrade(engine: Engine, target: str = "head") -> tuple[str | None, str | None]:
    from alembic import command

    return _migrate(engine, target, command.upgrade)


def downgrade(engine: Engine, target: str) -> tuple[str | None, str | None]:
    from alembic import command

    return _migrate(engine, target, command.downgrade)


def ensure_current(engine: Engine, *, notify: Callable[[str], None]) -> None:
    """Create a new database, upgrade an old one (saying so), refuse a newer or foreign one."""
    if current_revision(engine) == HEAD:
        return
    before, after = upgrade(engine, "head")
    if before == after:
        return
    if before is None:
        notify(f"created council-db database (schema {after}) at {engine.url.database or _where(engine)}")
    else:
        notify(f"upgraded council-db database schema from {before} to {after}")


def history() -> list[dict[str, str | None]]:
    """Revisions, newest first."""
    return [
        {"revision": s.revision, "down_revision": s.down_revision, "message": s.doc}
        for s in scripts().walk_revisions()
    ]
