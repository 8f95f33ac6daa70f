"""Engines with the connection settings council-db relies on, and the schema check on open.

SQLite gets its pragmas, WAL and private file; PostgreSQL (psycopg) gets none of that. On
both, a connection opened for writing (``write_lock`` execution option) takes the one write
lock when its transaction begins: BEGIN IMMEDIATE on SQLite, a transaction-level advisory
lock on PostgreSQL. Writers take turns, so concurrent importers, copies and first opens
never deadlock, and a migration never runs under a half-written import."""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, ContextManager, Iterator
from urllib.parse import quote

from council_db.errors import CouncilDbError
from council_db.store import key_hash
from council_db.store.location import ENV_VAR, POSTGRES_DRIVERS, checked_url, sqlite_path
from council_db.store.plain_sqlite import SqliteConnection, begin_writing
from council_db.terminal_text import terminal_text

if TYPE_CHECKING:
    from sqlalchemy import Connection
    from sqlalchemy.engine import Engine

    from council_db.store.reading import Reader

BUSY_TIMEOUT_MS = 30_000
BULK_PRAGMAS = {"temp_store": 2, "cache_size": -64 * 1024, "foreign_keys": 0}  # 2: MEMORY; negative: KiB
WRITE_LOCK_KEY = 0x636F756E63696C  # "council": the PostgreSQL advisory lock writers share


def create_private_file(path: Path) -> None:
    """A new database is created 0600 in a 0700 directory: scores are evidence, not public."""
    if path.exists():
        return
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError as error:
        raise CouncilDbError(f"cannot create a database at {path} ({error.strerror}): choose a directory you can "
                             f"write, with --db PATH or ${ENV_VAR}") from None


def no_database(path: Path, given: str | None = None) -> CouncilDbError:
    """What a command that only reads says when the file is not there: it never creates one,
    as a mistyped --db would otherwise leave an empty database and report on nothing. The
    path as the user ``given`` it comes first, where it differs from the file it names."""
    shown = path if given in (None, str(path)) else f"{given} ({path})"
    return CouncilDbError(f"no database at {shown}: the file does not exist. Check --db (or ${ENV_VAR}), or import "
                          f"records first: council-db --db {given or path} import bias_metrics.jsonl")


def _on_sqlite_connect(dbapi_connection, _record) -> None:
    # Hand transaction control to SQLAlchemy's "begin" event below (the pysqlite recipe):
    # the driver's own implicit BEGIN would not let us say IMMEDIATE.
    if hasattr(dbapi_connection, "autocommit"):  # Python >= 3.12
        dbapi_connection.autocommit = True
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    # Connection-local settings only: WAL is written into the file, so it is switched on
    # once the database is accepted (a refused file must be left untouched).
    for pragma in ("foreign_keys=ON", f"busy_timeout={BUSY_TIMEOUT_MS}", "synchronous=NORMAL"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()
    key_hash.register(dbapi_connection)


def use_wal(engine: Engine) -> None:
    """Readers never block the writer. Persistent in the file, so set once on acceptance.

    Switching the journal mode needs the database to itself, and SQLite's busy timeout does
    not wait for that: when several processes open a new database at once, one finds it
    locked. So retry, re-reading the mode (another process may have switched it), until the
    busy timeout has passed."""
    if engine.dialect.name != "sqlite":
        return
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    raw = engine.raw_connection()  # outside SQLAlchemy's transaction: the mode cannot change inside one
    try:
        cursor = raw.driver_connection.cursor()
        while True:
            try:
                if cursor.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    cursor.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        cursor.close()
    finally:
        raw.close()


def _on_sqlite_begin(connection: Connection) -> None:
    # Writers ask for IMMEDIATE so two importers queue on the busy timeout instead of
    # deadlocking when both try to upgrade a read lock.
    if connection.get_execution_options().get("write_lock"):
        _begin_writing(connection)
    else:
        connection.exec_driver_sql("BEGIN")


def _begin_writing(connection: Connection) -> None:
    """BEGIN IMMEDIATE, waiting for a running import (plain_sqlite.begin_writing)."""
    begin_writing(lambda: connection.exec_driver_sql("BEGIN IMMEDIATE"),
                  lambda: sqlite_path(connection.engine.url.render_as_string(hide_password=False)), say)


def _on_postgres_begin(connection: Connection) -> None:
    # Released at commit or rollback. Without it two importers inserting overlapping
    # sessions in different orders would each wait for a row the other holds (a deadlock).
    if connection.get_execution_options().get("write_lock"):
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})")


def _with_driver(url: str) -> str:
    """postgres:// and postgresql:// mean psycopg 3, the driver of the ``postgres`` extra."""
    parsed = checked_url(url)
    if parsed.drivername not in POSTGRES_DRIVERS:
        return url
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise CouncilDbError("PostgreSQL needs the psycopg driver: pip install 'council-db[postgres]'") from None
    return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)


def create_engine_for(url: str, *, create: bool = True) -> Engine:
    """An engine with council-db's connection settings; ``create`` makes a missing SQLite
    file (private), otherwise a missing file is an error naming the path."""
    from sqlalchemy import create_engine, event

    path = sqlite_path(url)
    if path is not None and create:
        create_private_file(path)
    elif path is not None and not path.exists():
        raise no_database(path)
    engine = create_engine(_with_driver(url))
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _on_sqlite_connect)
        event.listen(engine, "begin", _on_sqlite_begin)
    elif engine.dialect.name == "postgresql":
        event.listen(engine, "begin", _on_postgres_begin)
    return engine


class Database:
    """An open database. Reads go through ``reading()``; writers and everything else use the
    SQLAlchemy ``engine``, which a database opened by ``open_reader`` on a current SQLite file
    creates only when first asked for (reading() then uses sqlite3: see store/reading.py)."""

    def __init__(self, url: str, engine: Engine | None = None, *, sqlite_target: str | None = None,
                 plain_writes: bool = False):
        self.url = url
        self._engine = engine
        self._sqlite_target = sqlite_target  # the file, or a read-only file: URI, sqlite3 reads
        self.plain_writes = plain_writes  # bulk_writer through sqlite3 too (open_writer)

    def __repr__(self) -> str:
        return f"Database(url={self.url!r})"

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = read_only_engine(self.url) or create_engine_for(self.url, create=False)
        return self._engine

    def dispose(self) -> None:
        """Close the engine's pooled connections, if it was ever made."""
        if self._engine is not None:
            self._engine.dispose()

    @property
    def dialect(self) -> str:
        return "sqlite" if self._sqlite_target is not None else self.engine.dialect.name

    def reading(self) -> ContextManager[Reader]:
        """One read transaction: ``rows``, ``mapping`` and ``scalar`` of named-parameter SQL."""
        from council_db.store import reading

        if self._sqlite_target is not None:
            return reading.sqlite_reading(self._sqlite_target, uri=self._sqlite_target.startswith("file:"),
                                          busy_timeout_ms=BUSY_TIMEOUT_MS)
        return reading.engine_reading(self.engine.connect())

    def writer(self) -> Connection:
        """A connection whose transactions take the write lock up front."""
        return self.engine.connect().execution_options(write_lock=True)

    @contextmanager
    def bulk_writer(self) -> Iterator[Connection]:
        """``writer`` for an import or a copy: on SQLite, with BULK_PRAGMAS while it lasts.

        Each multi-row INSERT has a statement journal (so a failing row undoes only its
        statement), which SQLite spills to a temporary file past 64 KiB: that was 60% of
        the pages an import wrote. In memory it is a copy instead of a write. The larger
        page cache holds the session-key index's pages, which random keys dirty all over,
        between commits. Foreign keys are not checked (four lookups a score row, ~10% of
        the writer's time): ScoreWriter only uses ids it read or inserted in the same
        transaction, under the write lock, so they exist. All three are put back before the
        connection returns to the pool, so readers keep their bounded memory. A database
        opened by ``open_writer`` on a current SQLite file writes through sqlite3
        (store/plain_sqlite.py), on a connection of its own closed after."""
        if self.plain_writes:
            plain = SqliteConnection(Path(self._sqlite_target), busy_timeout_ms=BUSY_TIMEOUT_MS, notify=say)
            try:
                for name, value in BULK_PRAGMAS.items():
                    plain.raw.execute(f"PRAGMA {name}={value}")
                yield plain
            finally:
                plain.close()
            return
        with self.writer() as connection:
            if self.dialect != "sqlite":
                yield connection
                return
            driver = connection.connection.driver_connection
            before = {name: driver.execute(f"PRAGMA {name}").fetchone()[0] for name in BULK_PRAGMAS}
            for name, value in BULK_PRAGMAS.items():
                driver.execute(f"PRAGMA {name}={value}")
            try:
                yield connection
            finally:
                if connection.in_transaction():  # foreign_keys cannot change inside a transaction
                    connection.rollback()
                for name, value in before.items():
                    driver.execute(f"PRAGMA {name}={value}")


def say(message: str) -> None:
    print(terminal_text(message), file=sys.stderr)


def open_database(url: str, *, notify: Callable[[str], None] = say) -> Database:
    """Open (creating or upgrading as needed) a database; refuse one newer than this code."""
    from council_db.store import migrate

    engine = create_engine_for(url)
    try:
        migrate.ensure_current(engine, notify=notify)
    except BaseException:
        engine.dispose()
        raise
    use_wal(engine)
    return Database(url=url, engine=engine)


def open_writer(url: str, *, notify: Callable[[str], None] = say) -> Database:
    """``open_database`` for an import: a SQLite file that needs nothing done on open (at this
    code's schema, in WAL mode, writable here) is written through sqlite3, without
    SQLAlchemy (store/plain_sqlite.py); anything else is opened, created or upgraded as
    ``open_database`` does."""
    from council_db.store import migrate

    path = sqlite_path(url)
    if path is not None and path.exists() and _current_sqlite_file(url, migrate.HEAD) == str(path):
        return Database(url, sqlite_target=str(path), plain_writes=True)
    return open_database(url, notify=notify)


def _may_write(path: Path) -> bool:
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)


def read_only_uri(path: Path) -> str | None:
    """The URI to read a SQLite file this process may not write (or whose directory it may
    not write); None when it may, since a normal connection is then better: a read-only one
    would leave the -wal and -shm files behind, which only a writer removes.

    A WAL database is read through its -shm index. With a -wal file present (a writer is at
    work, or stopped uncleanly), mode=ro reads through both, even when -shm is read-only.
    Without one, SQLite would have to create the -shm, which a read-only directory forbids; the
    file is then opened immutable (no locks, no index): no writer is running, or there would
    be a -wal file. The one gap: another user who may write that directory starting to write
    during the read; the read may then be inconsistent."""
    if _may_write(path):
        return None
    wal_present = path.with_name(f"{path.name}-wal").exists()
    mode = "mode=ro" if wal_present or os.access(path.parent, os.W_OK | os.X_OK) else "immutable=1"
    return f"file:{quote(os.fsencode(path))}?{mode}"  # bytes: a file name need not be UTF-8


def read_only_engine(url: str) -> Engine | None:
    """An engine that only reads, for an existing SQLite file this process may not write;
    None for anything else (open it as usual). Its URL stays the database's own."""
    from sqlalchemy import create_engine, event

    path = sqlite_path(url)
    uri = read_only_uri(path) if path is not None and path.exists() else None
    if uri is None:
        return None
    engine = create_engine(url, creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False))
    event.listen(engine, "connect", _on_sqlite_connect)
    event.listen(engine, "begin", _on_sqlite_begin)
    return engine


def open_reader(url: str, *, notify: Callable[[str], None] = say, given: str | None = None) -> Database:
    """``open_database`` for a command that only reads: a SQLite file it may not write (in a
    read-only directory, or a read-only file) is read read-only instead of refused with
    "attempt to write a readonly database". Such a file cannot be upgraded, so it must be at
    this code's schema. It never creates a database: a missing file is an error naming it as
    ``given`` (the user's --db)."""
    from council_db.store import migrate

    path = sqlite_path(url)
    if path is not None and not path.exists():
        raise no_database(path, given)
    current = _current_sqlite_file(url, migrate.HEAD)
    if current is not None:
        return Database(url, sqlite_target=current)
    engine = read_only_engine(url)
    if engine is None:
        return open_database(url, notify=notify)
    revision = migrate.current_revision(engine)
    if revision != migrate.HEAD:
        engine.dispose()
        raise CouncilDbError(f"the database at {sqlite_path(url)} has schema {revision or '(none)'} and this "
                             f"council-db reads {migrate.HEAD}; you cannot write it or its directory, so it cannot "
                             "be upgraded here: run council-db db upgrade as a user who can, or use a matching "
                             "council-db")
    return Database(url=url, engine=engine)


def _current_sqlite_file(url: str, head: str) -> str | None:
    """What sqlite3 should open to read an existing SQLite file that needs nothing done on open
    (at schema ``head``; in WAL mode unless read-only here); None for anything else, which
    ``open_database`` or ``read_only_engine`` then opens, upgrades or refuses as before."""
    path = sqlite_path(url)
    if path is None or "?" in url or not url.startswith(("sqlite:///", "sqlite+pysqlite:///")) or not path.exists():
        return None
    uri = read_only_uri(path)
    target = uri or str(path)
    try:
        connection = sqlite3.connect(target, uri=uri is not None)
        try:
            connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            (revision,) = connection.execute("SELECT version_num FROM alembic_version").fetchone() or (None,)
            (journal,) = connection.execute("PRAGMA journal_mode").fetchone()
        finally:
            connection.close()
    except sqlite3.Error:
        return None
    if revision != head or (uri is None and journal != "wal"):
        return None
    return target
