"""A session key's hash, the same number in Python, in SQLite and in PostgreSQL: the first
32 bits of the MD5 of its UTF-8 bytes. A report's sample of a large window keeps the
sessions whose hash is below a share of 2^32, so the sample is chosen by the records
themselves: two stores holding the same records (imported in another order, after a
killed import used up ids, a copy, on another backend) sample the same sessions, where a
choice by row id did not.

Each session stores its hash (``sessions.key_hash``, written with it: revision 0014). For a
session written by another tool, without one, PostgreSQL computes it in SQL (``md5``); SQLite
has no hash function, so every connection council-db opens registers ``council_key_hash``
(``register``). The standard library's own MD5 (``_md5``) is used when present: OpenSSL's,
behind ``hashlib``, costs three times as much per call, and an import makes one per session.
"""

from __future__ import annotations

import sqlite3
import struct
from typing import Iterable

try:
    from _md5 import md5
except ImportError:  # a Python built without it: the same digest, from OpenSSL
    from hashlib import md5

BITS = 32
SQLITE_FUNCTION = "council_key_hash"
_FIRST_32_BITS = struct.Struct(">I").unpack_from  # a fifth quicker than int.from_bytes of a slice


def key_hash(key: str) -> int:
    """The first 32 bits of md5(key), as an unsigned integer (0 .. 2^32 - 1)."""
    # surrogatepass: a key SQLite hands over with a lone surrogate is hashed, not an error
    return _FIRST_32_BITS(md5(key.encode("utf-8", "surrogatepass")).digest())[0]


def key_hashes(keys: Iterable[str]) -> list[int]:
    """``key_hash`` of each key: the digests joined and read by one unpack (the writer hashes
    every new session's key; a judge log makes a session every record or two)."""
    digests = b"".join([md5(key.encode("utf-8", "surrogatepass")).digest() for key in keys])
    return list(struct.unpack(f">{len(digests) // 4}I", digests)[::4])


def register(connection: sqlite3.Connection) -> None:
    """Make ``council_key_hash(text)`` callable in this SQLite connection's SQL."""
    connection.create_function(SQLITE_FUNCTION, 1, key_hash, deterministic=True)


def key_hash_sql(dialect: str, column: str) -> str:
    """SQL giving ``key_hash`` of a text ``column`` on this backend ("sqlite" or "postgresql")."""
    if dialect == "postgresql":
        return f"('x' || substr(md5({column}), 1, 8))::bit(32)::bigint"
    return f"{SQLITE_FUNCTION}({column})"
