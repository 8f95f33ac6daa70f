"""The Datasette metadata file (titles and descriptions of every view and table) for a database.

Datasette keys table metadata by database name, which it takes from the file name. The file
shipped in the package is keyed "council" (the default council.db); a database with another
file name gets a copy keyed by its name, written once to the user cache directory.
"""

from __future__ import annotations

import json
from pathlib import Path

SHIPPED_NAME = "council"


def shipped() -> Path:
    return Path(__file__).resolve().with_suffix(".json")


def for_database(database: Path | None) -> Path:
    """The metadata file to pass to `datasette -m` for this SQLite file (None: not SQLite)."""
    if database is None or database.stem == SHIPPED_NAME:
        return shipped()
    from platformdirs import user_cache_path

    metadata = json.loads(shipped().read_text(encoding="utf-8"))
    metadata["databases"] = {database.stem: metadata["databases"][SHIPPED_NAME]}
    text = json.dumps(metadata, indent=2) + "\n"
    target = user_cache_path("council-db", appauthor=False) / "datasette" / f"{database.stem}.metadata.json"
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return target
