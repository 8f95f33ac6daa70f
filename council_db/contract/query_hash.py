"""The query hash of consent level 4: an HMAC-SHA256 prefix, never the query.

16 hex characters of HMAC-SHA256 over the first 100 characters of the query, keyed by a
secret of at least 16 characters from $COUNCIL_DB_HMAC_SECRET or from the file named by
$COUNCIL_DB_HMAC_SECRET_FILE. Anyone who knows the key can test guessed queries against
the hashes, so the file must be private (private_files.read_secret_file: a regular file, not a
symlink, owned by you, no group or world access) and a short key is refused: no key, no hash,
and a clear error. With no key configured at all there is no hash (``query_hash`` null), as
llm-council writes when it has no key, and NO_KEY says how to set one.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

from council_db.errors import CouncilDbError
from council_db.private_files import read_secret_file

SECRET_ENV = "COUNCIL_DB_HMAC_SECRET"
SECRET_FILE_ENV = "COUNCIL_DB_HMAC_SECRET_FILE"
MIN_SECRET_CHARS = 16
HASHED_CHARS = 100
HASH_HEX_CHARS = 16


def query_hash(query: str, secret: str) -> str:
    sample = query[:HASHED_CHARS]
    return hmac.new(secret.encode(), sample.encode(), hashlib.sha256).hexdigest()[:HASH_HEX_CHARS]


def _checked(secret: str, where: str) -> str:
    if len(secret) < MIN_SECRET_CHARS:
        raise CouncilDbError(f"the query-hash secret in {where} has {len(secret)} characters; it needs at least "
                             f"{MIN_SECRET_CHARS} (e.g. python3 -c 'import secrets; print(secrets.token_hex(32))')")
    return secret


NO_KEY = (f"consent level 4 without a query-hash key: query_hash is null (as llm-council writes it when it has no "
          f"key); to group sessions by query set ${SECRET_ENV} (>= {MIN_SECRET_CHARS} characters) or "
          f"${SECRET_FILE_ENV} (a chmod 600 file)")


def load_secret() -> str | None:
    """The secret; None when none is configured; a CouncilDbError for one that is configured
    but cannot be used safely (too short, a file others can read, a symlink): that is a
    mistake to fix, not a choice to go without hashes."""
    value = os.environ.get(SECRET_ENV, "").strip()
    if value:
        return _checked(value, f"${SECRET_ENV}")
    file_name = os.environ.get(SECRET_FILE_ENV, "").strip()
    if file_name:
        path = Path(file_name).expanduser()
        return _checked(read_secret_file(path, f"{SECRET_FILE_ENV}={path}"), str(path))
    return None
