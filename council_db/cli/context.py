"""What every command shares: which database, opened once, on first use."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import typer
from typer.core import TyperOption

if TYPE_CHECKING:
    from council_db.store.database import Database

DB_HELP = "Database file or SQLAlchemy URL. Default: $COUNCIL_DB, else council.db in your user data directory."


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

    def database(self, *, read_only: bool = False, importing: bool = False) -> Database:
        """The database, created or upgraded on first use (a newer one is refused).

        ``read_only`` is for commands that only read: a SQLite file that this process may
        not write (a read-only directory or file) is then opened read-only, not refused.
        ``importing``: a current SQLite file is written through sqlite3 (open_writer)."""
        if self._database is None:
            from council_db.store.database import open_database, open_reader, open_writer

            opener = open_writer if importing else open_database
            self._database = open_reader(self.url, given=self.db_option) if read_only else opener(self.url)
        return self._database


def state(ctx: typer.Context) -> State:
    return ctx.find_root().obj


def db_option() -> TyperOption:
    """--db as every command and group takes it (lazy_group adds it as each is built), so it
    may come after the command's name too: the one nearest the command wins, being read last."""
    def remember(ctx: typer.Context, _param: object, value: str | None) -> None:
        if value is not None:
            state(ctx).db_option = value

    return TyperOption(param_decls=["--db"], metavar="PATH|URL", expose_value=False, callback=remember,
                       help="Database file or SQLAlchemy URL, here or before the command.")


def message(text: str) -> None:
    """Messages go to stderr so stdout stays clean for pipes; one line each, any control
    character in the data they name escaped."""
    from council_db.terminal_text import terminal_text

    print(terminal_text(text), file=sys.stderr)


TIME_EXAMPLE = "give e.g. 2025-12-17 or 2025-12-17T10:30:00Z"


def checked_time(option: str, value: str | None) -> None:
    """A time option that is not ISO-8601 is a usage error naming the option and the value
    typed, with an example to copy."""
    from council_db.contract.fields import LineError
    from council_db.contract.timestamps import OUT_OF_RANGE, timestamp_us

    try:
        timestamp_us(value)
    except LineError as error:
        problem = OUT_OF_RANGE if error.problem.endswith(OUT_OF_RANGE) else "is not an ISO-8601 time"
        raise typer.BadParameter(f"{value!r} {problem}; {TIME_EXAMPLE}", param_hint=option) from None


def bad_time(problem: str) -> typer.BadParameter:
    """The usage error for time options that cannot go together (--since after --until): each
    was read already (checked_time), so the message names the two, without a format example."""
    return typer.BadParameter(problem, param_hint="--since/--until/--as-of")
