"""Opening a database: a new file gets the schema, an old one is upgraded, a newer or foreign
one is refused untouched; connections enforce foreign keys, WAL and a busy timeout; files
are private. Real SQLite files under tmp_path."""

from __future__ import annotations

import gc
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from council_db.errors import CouncilDbError, DatabaseTooNew
from council_db.store import migrate
from council_db.store.database import BUSY_TIMEOUT_MS, open_database
from tests.store.sqlite_files import (
    EXPECTED_VIEWS,
    alembic_versions,
    make_council_db_at,
    make_foreign_sqlite_file,
    revisions_oldest_first,
    schema_sql,
    set_revision,
    sha256,
    sqlite_objects,
    url_for,
)

# ------------------------------------------------------------------- opening a database


def test_opening_a_new_file_creates_the_schema_and_says_created(tmp_path, opened):
    path = tmp_path / "new.db"
    messages: list[str] = []

    database = opened(path, messages)

    assert migrate.current_revision(database.engine) == migrate.HEAD
    assert len(messages) == 1
    assert messages[0].startswith("created") and migrate.HEAD in messages[0]


def test_opening_an_up_to_date_database_says_nothing(tmp_path, opened):
    path = tmp_path / "council.db"
    opened(path).engine.dispose()
    messages: list[str] = []

    opened(path, messages)

    assert messages == []


def test_opening_a_database_at_an_older_revision_upgrades_it_and_says_upgraded(tmp_path, opened):
    older = revisions_oldest_first()[0]
    assert older != migrate.HEAD
    path = tmp_path / "old.db"
    make_council_db_at(path, older)
    messages: list[str] = []

    database = opened(path, messages)

    assert migrate.current_revision(database.engine) == migrate.HEAD
    assert len(messages) == 1
    assert messages[0].startswith("upgraded")
    assert older in messages[0] and migrate.HEAD in messages[0]
    assert sqlite_objects(path)["view"] == EXPECTED_VIEWS


def test_database_from_a_newer_council_db_is_refused_and_left_byte_for_byte_untouched(
    tmp_path, opened
):
    path = tmp_path / "newer.db"
    opened(path).engine.dispose()
    set_revision(path, "9999")
    before = (sha256(path), schema_sql(path))
    assert not Path(f"{path}-wal").exists(), "all connections are closed: no WAL left to replay"

    with pytest.raises(DatabaseTooNew) as refused:
        open_database(url_for(path), notify=pytest.fail)
    message = str(refused.value)
    # open_database does not hand back the engine it made when it refuses: drop every
    # reference and collect it, so its pooled connection is closed before we compare.
    del refused
    gc.collect()

    assert "9999" in message
    assert "Upgrade council-db" in message
    assert (sha256(path), schema_sql(path)) == before
    assert alembic_versions(path) == ["9999"]


def test_sqlite_file_with_unrelated_tables_and_no_schema_version_is_refused(tmp_path):
    path = tmp_path / "recipes.db"
    make_foreign_sqlite_file(path)

    with pytest.raises(CouncilDbError, match="not a council-db database") as refused:
        open_database(url_for(path), notify=pytest.fail)
    assert not isinstance(refused.value, DatabaseTooNew)
    del refused
    gc.collect()

    assert sqlite_objects(path)["table"] == {"recipes"}, "no council-db table was added"
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("SELECT name FROM recipes").fetchall() == [("bread",)]
    finally:
        connection.close()


def test_refusing_a_foreign_sqlite_file_leaves_its_bytes_unchanged(tmp_path):
    path = tmp_path / "recipes.db"
    make_foreign_sqlite_file(path)
    before = sha256(path)

    with pytest.raises(CouncilDbError):
        open_database(url_for(path), notify=pytest.fail)
    gc.collect()

    assert sha256(path) == before




# ------------------------------------------------------------------ connection settings


def test_connections_enforce_foreign_keys_use_wal_and_wait_when_busy(tmp_path, opened, engines):
    database = opened(tmp_path / "council.db")
    with database.engine.connect() as connection:  # WAL is set in the file once it is accepted
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    for engine in (database.engine, engines(tmp_path / "other.db")):
        with engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            busy = connection.exec_driver_sql("PRAGMA busy_timeout").scalar()
            assert busy > 0 and busy == BUSY_TIMEOUT_MS


def test_score_pointing_at_a_missing_session_is_refused_by_a_real_foreign_key(tmp_path, opened):
    database = opened(tmp_path / "council.db")
    with database.engine.begin() as connection:
        connection.execute(text("INSERT INTO models (id, name) VALUES (1, 'judge'), (2, 'candidate')"))
        connection.execute(text("INSERT INTO scales (id, name, low, high) VALUES (1, '1-10', 1, 10)"))
    score = text(
        "INSERT INTO scores (session_id, reviewer_id, model_id, position, response_length_chars, "
        "score_value, scale_id, display_order, self_review) VALUES (:session, 1, 2, 0, 10, 5, 1, 1, 0)"
    )

    with pytest.raises(IntegrityError, match="FOREIGN KEY"):
        with database.engine.begin() as connection:
            connection.execute(score, {"session": 42})

    with database.engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO sessions (id, session_key, timestamp, consent_level, schema_version) "
                "VALUES (42, 's', '2025-01-01T00:00:00Z', 1, '1.2.0')"
            )
        )
        connection.execute(score, {"session": 42})  # the same row is fine once the session exists
    with database.engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM scores")).scalar() == 1


# ------------------------------------------------------------------------ file modes


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_new_database_file_is_0600_in_a_new_0700_directory(tmp_path, opened, umask_022):
    path = tmp_path / "private" / "council.db"

    opened(path)

    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_processes_opening_a_new_database_at_once_all_succeed_and_one_creates_it(tmp_path):
    """Migrations run under BEGIN IMMEDIATE and re-check the revision inside the lock."""

    script = ("import sys; from council_db.store.database import open_database; "
              "open_database('sqlite:///' + sys.argv[1], notify=lambda m: print(m))")
    for round_number in range(3):
        path = tmp_path / f"race{round_number}.db"
        processes = [subprocess.Popen([sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE) for _ in range(6)]
        outputs = [process.communicate(timeout=60) for process in processes]
        assert all(process.returncode == 0 for process in processes), [err for _, err in outputs]
        assert sum(out.count(b"created") for out, _ in outputs) == 1
