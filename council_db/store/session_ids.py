"""Session ids shortened the way git shortens hashes, and a short id found again.

A UUID is 36 characters, half of an 80-column table. A table shows each id's shortest prefix
that no other stored session shares, at least 8 characters, all of a table's ids the same
length; any prefix that names one session is accepted back (``council-db audit``), and one
that names several is refused listing them.

SQLite compares text by its bytes, so the ids that share a prefix are one range of its
session_key index. PostgreSQL's collation may not sort that way: there one query looks at
every id's first characters (a scan of the sessions table, once per table printed).
"""

from __future__ import annotations

import os

from council_db.errors import CouncilDbError
from council_db.store.database import Database
from council_db.store.reading import Reader

MIN_LENGTH = 8
SHOWN_CANDIDATES = 10


def abbreviations(db: Database, ids: list[str], minimum: int = MIN_LENGTH) -> dict[str, str]:
    """Each of ``ids`` (stored session ids) -> its prefix at the length that makes every one unique."""
    if not ids:
        return {}
    with db.reading() as reader:
        neighbours = _sharing_prefixes(reader, db.dialect, sorted({i[:minimum] for i in ids}))
    length = minimum
    for key in set(ids):
        for other in neighbours.get(key[:minimum], ()):
            if other != key:
                length = max(length, len(os.path.commonprefix([key, other])) + 1)
    return {key: key[:length] for key in ids}


def full_id(db: Database, given: str) -> str:
    """The stored session id ``given`` is, or is the unique prefix of; an error otherwise."""
    with db.reading() as reader:
        if reader.rows("SELECT 1 FROM sessions WHERE session_key = :key", {"key": given}):
            return given
        found = _with_prefix(reader, db.dialect, given, SHOWN_CANDIDATES + 1)
    if len(found) == 1:
        return found[0]
    if not found:
        raise CouncilDbError(f"unknown session {given!r}: see council-db sessions (no stored id is it or "
                             "starts with it)")
    shown = ", ".join(found[:SHOWN_CANDIDATES]) + (", ..." if len(found) > SHOWN_CANDIDATES else "")
    raise CouncilDbError(f"{given!r} starts {'more than ' if len(found) > SHOWN_CANDIDATES else ''}"
                         f"{min(len(found), SHOWN_CANDIDATES)} session ids: {shown}; give more of the id")


def _sharing_prefixes(reader: Reader, dialect: str, prefixes: list[str]) -> dict[str, list[str]]:
    """Prefix -> the stored ids starting with it (usually one: the id itself)."""
    if dialect == "sqlite":
        return {prefix: _with_prefix(reader, dialect, prefix) for prefix in prefixes}
    length = len(prefixes[0])
    found: dict[str, list[str]] = {}
    sql = "SELECT session_key FROM sessions WHERE substr(session_key, 1, :length) IN :prefixes"
    for (key,) in reader.rows(sql, {"length": length, "prefixes": prefixes}):
        found.setdefault(key[:length], []).append(key)
    return found


def _with_prefix(reader: Reader, dialect: str, prefix: str, limit: int | None = None) -> list[str]:
    """The stored ids starting with ``prefix``, in order, at most ``limit``."""
    cap = "" if limit is None else f" LIMIT {int(limit)}"
    if dialect == "sqlite":  # a range of the index: text compares by its bytes
        sql = ("SELECT session_key FROM sessions WHERE session_key >= :prefix AND session_key < :after "
               f"ORDER BY session_key{cap}")
        rows = reader.rows(sql, {"prefix": prefix, "after": prefix + "\U0010ffff"})
    else:
        sql = f"SELECT session_key FROM sessions WHERE starts_with(session_key, :prefix) ORDER BY session_key{cap}"
        rows = reader.rows(sql, {"prefix": prefix})
    return [key for (key,) in rows]
