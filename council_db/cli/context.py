"""What every command shares: which database, opened once, on first use."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from council_db.store.database import Database


@dataclass
class State:
    db_option: str | None = None
    _database: Database | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        from council_db.store.location import resolve_url

        return resolve_url(self.db_option)

    @property
    def shown_location(self) -> str:
        from council_db.store.location import shown_location

        return shown_location(self.url)

    def database(self, *, read_only: bool = False) -> Database:
        """The database, created or upgraded on first use (a newer one is refused).

        ``read_only`` is for commands that only read: a SQLite file that this process may
        not write (a read-only directory or file) is then opened read-only, not refused."""
        if self._database is None:
            from council_db.store.database import open_database, open_reader

            self._database = (open_reader if read_only else open_database)(self.url)
        return self._database


def state(ctx: typer.Context) -> State:
    return ctx.find_root().obj


def message(text: str) -> None:
    """Messages go to stderr so stdout stays clean for pipes."""
    print(text, file=sys.stderr)


def bad_time(problem: str) -> typer.BadParameter:
    """The usage error for a time option that is not ISO-8601, with an example to copy."""
    return typer.BadParameter(f"{problem}; give e.g. 2025-12-17 or 2025-12-17T10:30:00Z",
                              param_hint="--since/--until/--as-of")
