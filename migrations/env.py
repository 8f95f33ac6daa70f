"""Alembic environment: runs on a connection council-db hands over, or on a URL for developers."""

import os

from alembic import context
from sqlalchemy import engine_from_config, pool

from council_db.store.models import Base, schema_filter

config = context.config
target_metadata = Base.metadata


def _configure(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        include_object=schema_filter(connection.dialect.name),
    )


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    url = os.environ.get("COUNCIL_DB") or config.get_main_option("sqlalchemy.url")
    if "://" not in url:
        url = f"sqlite:///{url}"
    engine = engine_from_config({"sqlalchemy.url": url}, prefix="sqlalchemy.", poolclass=pool.NullPool)
    with engine.connect() as connection:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("council-db migrations run online only: give a database URL")
run_migrations_online()
