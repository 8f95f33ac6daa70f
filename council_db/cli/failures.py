"""Failures of what is around council-db (files, disks, permissions, the database server) as
one line naming what failed and what to do. Anything else is a bug in council-db and keeps
its traceback: ``describe`` returns None for it.

Where the code knows more (which file, which step), it raises CouncilDbError with a better
message itself; this is the net under everything else, pydantic's refusals included (one line,
without its "Value error, " prefix)."""

from __future__ import annotations

import errno
import os
import sqlite3
import sys

PERMISSIONS = "check its permissions and its directory's (ls -ld), or run as a user who may"
DISK_FULL = "free some space, or write somewhere else, and run it again"
OS_FIXES = {
    errno.EACCES: PERMISSIONS,
    errno.EPERM: PERMISSIONS,
    errno.ENOSPC: DISK_FULL,
    errno.EDQUOT: DISK_FULL,
    errno.EFBIG: "the file grew past the size this process may write (ulimit -f): " + DISK_FULL,
    errno.EROFS: "the file system is mounted read-only: write somewhere else",
    errno.EIO: "the disk reported an I/O error: check it (dmesg) before trusting what is on it",
}
DATABASE_FIXES = {  # a phrase of SQLite's or the server's message: what to do
    "readonly database": "you cannot write it or its directory: " + PERMISSIONS,
    "disk is full": DISK_FULL,
    "disk I/O error": "is the disk full, or failing? " + DISK_FULL,
    "database is locked": "another process held it for 30 s: try again when that process has finished",
    "not a database": "it is damaged or not an SQLite file: point --db at the right file, or restore a backup "
                      "(council-db db restore FILE)",
    "malformed": "it is damaged: restore a backup (council-db db restore FILE)",
    "unable to open database file": "check that its directory exists and that you may read and write there",
    "connection": "check that the server is running and that its URL is right",
}
# PostgreSQL SQLSTATEs that report a refusal, not a mistake in council-db's SQL:
# permission denied (42501) and a read-only transaction or server (25006).
REFUSALS = {"42501", "25006"}


def describe(error: BaseException, database: str) -> str | None:
    """The one-line message for an expected failure; None for a bug. ``database`` is the
    database the command works on (a path, or a URL without its password)."""
    if isinstance(error, OSError):
        return _os_error(error)
    if _expected_database_error(error):
        return _database_error(error, database)
    if _validation_error(error):
        return _first_problem(error)
    return None


def _os_error(error: OSError) -> str:
    subject = f"{os.fsdecode(error.filename)}: " if error.filename is not None else ""
    text = f"{subject}{error.strerror or error}"
    fix = OS_FIXES.get(error.errno)
    return f"{text}; {fix}" if fix else text


def _expected_database_error(error: BaseException) -> bool:
    """Operational failures (locks, disks, permissions, connections, damaged files), from
    sqlite3 directly or through SQLAlchemy; not the errors that a wrong statement or a
    broken constraint raises, which are bugs."""
    original = getattr(error, "orig", None)
    if "sqlalchemy" in sys.modules:
        from sqlalchemy import exc

        if isinstance(error, exc.OperationalError) or type(error) is exc.DatabaseError:
            return True
        if isinstance(error, exc.DBAPIError) and getattr(original, "sqlstate", None) in REFUSALS:
            return True
    return isinstance(error, sqlite3.OperationalError) or type(error) is sqlite3.DatabaseError


def _validation_error(error: BaseException) -> bool:
    """A pydantic ValidationError: input a model refused (already loaded if one was raised)."""
    if "pydantic" not in sys.modules:
        return False
    from pydantic import ValidationError

    return isinstance(error, ValidationError)


def _first_problem(error) -> str:
    """A ValidationError's first problem as ``field: message``, without pydantic's "Value
    error, " prefix or its input (which may be a query's text)."""
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    text = str(first["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    more = len(error.errors()) - 1
    return (f"{where}: " if where else "") + text + (f" (and {more} more problems)" if more else "")


def _database_error(error: BaseException, database: str) -> str:
    original = getattr(error, "orig", None) or error
    text = str(original).strip().splitlines()[0] if str(original).strip() else type(original).__name__
    fix = next((fix for phrase, fix in DATABASE_FIXES.items() if phrase in text), None)
    return f"database error: {text} ({database})" + (f"; {fix}" if fix else "")
