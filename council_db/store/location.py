"""Which database to use: --db, else $COUNCIL_DB, else council.db in the user data directory."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "COUNCIL_DB"


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
