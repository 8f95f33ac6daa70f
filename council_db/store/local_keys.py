"""Random keys of this database alone, made by its migration (revision 0007).

A rejected line is stored with a hash, so that it can be told apart from a changed line
without keeping its text. A plain SHA-256 of a line that is only a short query could be
matched against a list of guessed queries; keyed by a random key that only this database
holds, the hash says nothing to anyone without the database.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

LINE_HASH = "line_hash"
LINE_HASH_CHARS = 16


def line_hash_key(connection) -> bytes:
    """This database's key for line hashes (made here if a database lost it)."""
    from council_db.store.named_sql import run

    value = run(connection, "SELECT value FROM local_keys WHERE name = :name", {"name": LINE_HASH}).scalar()
    if value is None:
        value = secrets.token_hex(32)
        run(connection, "INSERT INTO local_keys (name, value) VALUES (:name, :value)",
            {"name": LINE_HASH, "value": value})
    return bytes.fromhex(value)


def line_hash(key: bytes, digest: bytes) -> str:
    """16 hex characters of HMAC-SHA256 over a line's SHA-256 digest."""
    return hmac.new(key, digest, hashlib.sha256).hexdigest()[:LINE_HASH_CHARS]
