"""Which database to use: --db, else $COUNCIL_DB, else council.db in the user data directory."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from council_db.errors import CouncilDbError

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

ENV_VAR = "COUNCIL_DB"
POSTGRES_DRIVERS = {"postgres", "postgresql", "postgresql+psycopg"}
SQLITE_DRIVERS = {"sqlite", "sqlite+pysqlite"}
WHAT_WORKS = "council-db works with SQLite (a file path, or sqlite:///PATH) and PostgreSQL (postgresql://USER@HOST/DB)"


def default_path() -> Path:
    from platformdirs import user_data_path

    return user_data_path("council-db", appauthor=False) / "council.db"


def resolve_url(db: str | None) -> str:
    """A file path or an SQLAlchemy URL, turned into a URL."""
    value = db or os.environ.get(ENV_VAR) or str(default_path())
    if "://" in value:
        return value
    return f"sqlite:///{Path(value).expanduser().resolve()}"


def sqlite_path(url: str) -> Path | None:
    """The file behind an SQLite URL, or None for other databases and in-memory SQLite."""
    prefix, _, rest = url.partition(":///")
    if not prefix.startswith("sqlite") or not rest or rest.startswith(":memory:"):
        return None
    return Path(rest.split("?", 1)[0])


def checked_url(url: str) -> URL:
    """The parsed URL of a database council-db can use; anything else is refused naming it
    (password hidden), before SQLAlchemy looks for a driver it would not find."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as error:  # ValueError: a port that is not a number
        raise CouncilDbError(f"{_without_password(url)} is not a database URL ({error}): {WHAT_WORKS}") from None
    if parsed.drivername not in POSTGRES_DRIVERS | SQLITE_DRIVERS:
        raise CouncilDbError(f"{parsed.render_as_string(hide_password=True)}: {parsed.drivername} is not supported; "
                             f"{WHAT_WORKS}")
    return parsed


def shown_location(url: str) -> str:
    """The database as messages name it: its file, or its URL with the password hidden."""
    path = sqlite_path(url)
    return str(path) if path is not None else _without_password(url)


def _without_password(url: str) -> str:
    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)
