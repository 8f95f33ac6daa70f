"""Where the migrations and SQL files are, whether installed from a wheel or run from a checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _locate(name: str) -> Path:
    """A wheel carries the folder inside the package; a checkout keeps it at the top."""
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"council-db is installed without its {name}/ folder (looked beside {_PACKAGE})")


def migrations_dir() -> Path:
    return _locate("migrations")


def sql_dir() -> Path:
    return _locate("sql")


@cache
def read_sql(name: str) -> str:
    """The text of sql/NAME.sql."""
    return (sql_dir() / f"{name}.sql").read_text(encoding="utf-8")
