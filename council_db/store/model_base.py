"""The declarative base every model shares, and the helpers for what one backend alone has
(store/models.py's docstring says why the writer's tables have SQLite-only foreign keys)."""

from __future__ import annotations

from sqlalchemy import ForeignKeyConstraint, MetaData
from sqlalchemy.orm import DeclarativeBase

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def sqlite_only(column: str, referred: str, ondelete: str | None = None) -> ForeignKeyConstraint:
    """A foreign key that only SQLite has (see the module's docstring); ``schema_filter``
    leaves it out when the models are compared with a PostgreSQL database."""
    constraint = ForeignKeyConstraint([column], [referred], ondelete=ondelete, info={"dialects": ("sqlite",)})
    return constraint.ddl_if(dialect="sqlite")


def schema_filter(dialect: str):
    """Alembic's ``include_object`` for a database of ``dialect``: what the models declare
    for other databases only is not expected there."""
    def include(item, name, kind, reflected, compare_to) -> bool:
        return reflected or dialect in getattr(item, "info", {}).get("dialects", (dialect,))
    return include
