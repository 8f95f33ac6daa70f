"""Backups of a SQLite database while imports write to it, and restoring one.

A backup is ``VACUUM INTO`` a private temporary file next to the target: one read
transaction, so the copy is the database as of one moment (in WAL mode writers go on
meanwhile), compacted. It is checked (``PRAGMA quick_check``) and synced before it takes
the target's name, so a crash never leaves a half-written backup under that name; the
temporary file a killed backup leaves (``.NAME.PID.partial``) is deleted by the next backup
to that name. A database this process may not write (read-only directory) is copied
through a read-only connection.

A restore copies the backup into the database through SQLite's online backup API, which
writes under the database's own lock and WAL, so other connections see either the old or
the restored database. Copying the file back by hand is only safe with every council-db
process stopped and the ``-wal`` and ``-shm`` files beside it deleted: a stale WAL would be
replayed onto the restored file.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing, suppress
from dataclasses import dataclass
from pathlib import Path

from council_db.errors import CouncilDbError
from council_db.store.database import BUSY_TIMEOUT_MS, create_private_file, read_only_uri


@dataclass(frozen=True)
class Summary:
    """What a backup or restored database holds."""

    revision: str | None
    sessions: int
    records: int


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)


def _connect_to_read(path: Path) -> sqlite3.Connection:
    """The database to copy, read-only when this process may not write it (database.read_only_uri)."""
    uri = read_only_uri(path)
    if uri is None:
        return _connect(path)
    return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _remove_stale_partials(target: Path) -> None:
    """Delete the temporary files of backups to ``target`` that were killed before they could
    (``.NAME.PID.partial`` whose process is gone); a running backup's file stays."""
    prefix, suffix = f".{target.name}.", ".partial"
    try:
        names = os.listdir(target.parent)
    except OSError:  # tidying only: what we may not list, we leave
        return
    for name in names:
        pid = name[len(prefix):-len(suffix)]
        if name.startswith(prefix) and name.endswith(suffix) and pid.isdigit() and not _alive(int(pid)):
            with suppress(OSError):  # gone meanwhile, or another user's
                (target.parent / name).unlink()


def _vacuum_into(database: Path, temporary: Path, target: Path) -> None:
    """The copy; a damaged database and a failed write (a full disk) are told apart by SQLite's
    error class: reading errors are DatabaseError, writing ones OperationalError."""
    try:
        with closing(_connect_to_read(database)) as source:
            source.execute("VACUUM INTO ?", (str(temporary),))
    except sqlite3.OperationalError as error:
        raise CouncilDbError(f"could not write the backup {target} ({error}): is the disk full? free some space "
                             "or back up to another place") from None
    except sqlite3.DatabaseError as error:
        raise CouncilDbError(f"{database} is not a readable SQLite database ({error}): restore it from a backup "
                             "(council-db db restore FILE)") from None


def summarise(path: Path) -> Summary:
    """Check a database file and say what it holds; refuse anything that is not sound."""
    with closing(_connect(path)) as connection:
        try:
            check = [row[0] for row in connection.execute("PRAGMA quick_check")]
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as error:
            raise CouncilDbError(f"{path} is not a readable SQLite database ({error})") from None
        if check != ["ok"]:
            raise CouncilDbError(f"{path} failed SQLite's integrity check: {'; '.join(check[:3])}")
        if "alembic_version" not in tables:
            raise CouncilDbError(f"{path} is not a council-db database (it has no schema version)")
        revision = connection.execute("SELECT version_num FROM alembic_version").fetchone()
        sessions, records = (connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                             if table in tables else 0 for table in ("sessions", "scores"))
        return Summary(revision[0] if revision else None, sessions, records)


def _sync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def backup(database: Path, target: Path, *, force: bool = False) -> Summary:
    """Copy ``database`` to ``target`` as of one moment; an existing target only with ``force``."""
    if not database.is_file():
        raise CouncilDbError(f"no database at {database} to back up")
    if target.is_dir():
        raise CouncilDbError(f"{target} is a directory: give the backup's file name")
    if target.exists() and not force:
        raise CouncilDbError(f"{target} already exists: choose another name, or add --force to replace it")
    if target.exists() and target.resolve() == database.resolve():
        raise CouncilDbError(f"{target} is the database itself: back it up to another file")
    if not target.parent.is_dir():
        raise CouncilDbError(f"{target.parent} is not a directory: create it first")
    _remove_stale_partials(target)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.partial")
    with suppress(FileNotFoundError):
        temporary.unlink()
    try:
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))  # scores are not public
    except OSError as error:
        raise CouncilDbError(f"cannot write the backup {target} ({error.strerror}): choose a directory you can "
                             "write") from None
    try:
        _vacuum_into(database, temporary, target)
        summary = summarise(temporary)
        _sync(temporary)
        if force:
            os.replace(temporary, target)
        else:
            try:
                os.link(temporary, target)  # fails if the name was taken meanwhile: never overwrite
            except FileExistsError:
                raise CouncilDbError(f"{target} appeared while backing up: not replaced (add --force)") from None
        _sync(target.parent)
        return summary
    finally:
        with suppress(FileNotFoundError):
            temporary.unlink()


def restore(backup_file: Path, database: Path, *, known_revisions: set[str], force: bool = False) -> Summary:
    """Replace the database's content with a backup's, under the database's own lock."""
    if not backup_file.is_file():
        raise CouncilDbError(f"{backup_file}: no such backup file")
    summary = summarise(backup_file)
    if summary.revision is not None and summary.revision not in known_revisions:
        raise CouncilDbError(f"{backup_file} has schema revision {summary.revision}, written by a newer "
                             "council-db: upgrade council-db to restore it")
    if database.exists() and database.stat().st_size and not force:
        raise CouncilDbError(f"the database at {database} already exists: add --force to replace its content "
                             "with the backup's")
    create_private_file(database)
    with closing(_connect(backup_file)) as source, closing(_connect(database)) as target:
        source.backup(target)
    return summarise(database)
