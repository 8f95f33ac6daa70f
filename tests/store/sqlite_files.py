"""Real SQLite files for the schema tests: one made at a given revision, its schema and
revision read back with plain sqlite3, a foreign SQLite file, and the CLI as a subprocess."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from council_db.store import migrate
from council_db.store.database import create_engine_for

EXPECTED_TABLES = {
    "models",
    "session_stats",
    "scales",
    "exclusion_reasons",
    "imports",
    "rejected_lines",
    "import_overlaps",
    "sessions",
    "answer_styles",
    "dimension_names",
    "score_dimensions",
    "record_envelopes",
    "scores",
    "outbox_events",
    "local_keys",
    "reviewer_day_totals",
    "model_day_totals",
    "pair_day_totals",
    "day_totals",
    "slot_day_totals",
    "watch_state",
    "packed_records",
    "store_options",
    "check_marks",
    "check_counts",
    "clean_checks",
}
EXPECTED_VIEWS = {"score_records", "session_summaries", "within_session_scores", "slot_means", "reviewer_profiles",
                  "reviewer_daily", "daily_scores", "model_profiles", "dimension_records", "reviewer_identities"}



def url_for(path: Path) -> str:
    return f"sqlite:///{path}"


def revisions_oldest_first() -> list[str]:
    return [script.revision for script in reversed(list(migrate.scripts().walk_revisions()))]


def sqlite_objects(path: Path) -> dict[str, set[str]]:
    """{'table': {...}, 'view': {...}, 'index': {...}}, read with a plain sqlite3 connection."""
    connection = sqlite3.connect(path)
    try:
        rows = connection.execute(
            "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ).fetchall()
    finally:
        connection.close()
    found: dict[str, set[str]] = {"table": set(), "view": set(), "index": set(), "trigger": set()}
    for kind, name in rows:
        found[kind].add(name)
    return found


def schema_sql(path: Path) -> list[tuple]:
    """The whole schema as SQLite stores it, for comparing two databases exactly."""
    connection = sqlite3.connect(path)
    try:
        return connection.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        ).fetchall()
    finally:
        connection.close()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def alembic_versions(path: Path) -> list[str]:
    connection = sqlite3.connect(path)
    try:
        return [row[0] for row in connection.execute("SELECT version_num FROM alembic_version")]
    finally:
        connection.close()


def make_council_db_at(path: Path, revision: str) -> None:
    engine = create_engine_for(url_for(path))
    try:
        migrate.upgrade(engine, revision)
    finally:
        engine.dispose()


def set_revision(path: Path, revision: str) -> None:
    connection = sqlite3.connect(path)
    try:
        connection.execute("UPDATE alembic_version SET version_num = ?", (revision,))
        connection.commit()
    finally:
        connection.close()


def make_foreign_sqlite_file(path: Path) -> None:
    connection = sqlite3.connect(path)
    try:
        connection.execute("CREATE TABLE recipes (id INTEGER PRIMARY KEY, name TEXT)")
        connection.execute("INSERT INTO recipes (name) VALUES ('bread')")
        connection.commit()
    finally:
        connection.close()


def run_cli(cwd: Path, db: Path | str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "COUNCIL_DB"}
    return subprocess.run(
        [sys.executable, "-m", "council_db", "--db", str(db), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
