"""The schema is owned by Alembic: migrations build it, upgrade old databases, refuse newer ones.

Every test works on real SQLite files under tmp_path; nothing is mocked.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Column, Float, MetaData, text
from sqlalchemy.exc import IntegrityError

from council_db.contract.fields import EXCLUSION_REASONS
from council_db.errors import CouncilDbError, DatabaseTooNew
from council_db.store import migrate
from council_db.store.database import BUSY_TIMEOUT_MS, create_engine_for, open_database
from council_db.store.models import NAMING_CONVENTION, Base

EXPECTED_TABLES = {
    "models",
    "session_stats",
    "scales",
    "exclusion_reasons",
    "imports",
    "rejected_lines",
    "sessions",
    "record_envelopes",
    "scores",
    "outbox_events",
}
EXPECTED_VIEWS = {"score_records", "session_summaries", "within_session_scores", "slot_means", "reviewer_profiles",
                  "reviewer_daily", "daily_scores", "model_profiles"}


# ---------------------------------------------------------------------------- helpers


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


@pytest.fixture
def engines():
    """create_engine_for, with every engine disposed (connections closed) at the end."""
    made = []

    def make(path: Path):
        engine = create_engine_for(url_for(path))
        made.append(engine)
        return engine

    yield make
    for engine in made:
        engine.dispose()


@pytest.fixture
def opened():
    """open_database, collecting the notify messages; every engine disposed at the end."""
    made = []

    def open_(path: Path, messages: list[str] | None = None):
        sink = messages if messages is not None else []
        database = open_database(url_for(path), notify=sink.append)
        made.append(database)
        return database

    yield open_
    for database in made:
        database.engine.dispose()


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


# ----------------------------------------------------------------- building the schema


def test_upgrade_from_empty_database_reaches_head_with_all_tables_the_view_and_seeded_reasons(
    tmp_path, engines
):
    path = tmp_path / "council.db"
    engine = engines(path)
    assert migrate.current_revision(engine) is None

    migrate.upgrade(engine, "head")

    assert migrate.current_revision(engine) == migrate.HEAD
    objects = sqlite_objects(path)
    assert objects["table"] == EXPECTED_TABLES | {"alembic_version"}
    assert objects["view"] == EXPECTED_VIEWS
    with engine.connect() as connection:
        reasons = {
            code: (id_, description)
            for id_, code, description in connection.execute(
                text("SELECT id, code, description FROM exclusion_reasons")
            )
        }
        # The views are usable, not just present.
        for view in EXPECTED_VIEWS:
            assert connection.execute(text(f"SELECT count(*) FROM {view}")).scalar() == 0
    assert reasons == EXCLUSION_REASONS


def test_head_constant_equals_the_single_alembic_head():
    scripts = migrate.scripts()
    assert scripts.get_heads() == [migrate.HEAD], "one linear history, whose head is migrate.HEAD"
    assert scripts.get_current_head() == migrate.HEAD


def test_models_and_migrations_do_not_drift(tmp_path, engines):
    engine = engines(tmp_path / "council.db")
    migrate.upgrade(engine, "head")

    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)

    assert differences == []


def test_drift_check_reports_a_model_column_that_no_migration_adds(tmp_path, engines):
    """Proves the no-drift test above can fail: a column only in the models is reported."""
    engine = engines(tmp_path / "council.db")
    migrate.upgrade(engine, "head")
    copy = MetaData(naming_convention=NAMING_CONVENTION)
    for table in Base.metadata.sorted_tables:
        table.to_metadata(copy)

    with engine.connect() as connection:
        context = MigrationContext.configure(connection)
        assert compare_metadata(context, copy) == [], "an unchanged copy of the models matches"
        copy.tables["scores"].append_column(Column("confidence", Float, nullable=True))
        differences = compare_metadata(context, copy)

    assert len(differences) == 1
    kind, schema, table, column = differences[0]
    assert (kind, schema, table, column.name) == ("add_column", None, "scores", "confidence")


# ------------------------------------------------------------------ up and down again


def test_downgrade_to_each_earlier_revision_and_base_then_upgrade_to_head_again(tmp_path, engines):
    revisions = revisions_oldest_first()
    assert revisions[-1] == migrate.HEAD
    # What each revision looks like when built straight from empty.
    fresh = {}
    for revision in revisions:
        reference = tmp_path / f"fresh-{revision}.db"
        make_council_db_at(reference, revision)
        fresh[revision] = schema_sql(reference)

    path = tmp_path / "council.db"
    engine = engines(path)
    migrate.upgrade(engine, "head")
    for revision in reversed(revisions[:-1]):
        migrate.downgrade(engine, revision)
        assert migrate.current_revision(engine) == revision
        assert schema_sql(path) == fresh[revision], f"downgrading to {revision} gives its schema"
    assert sqlite_objects(path)["view"] == set(), "the first revision has no view"

    migrate.downgrade(engine, "base")
    assert migrate.current_revision(engine) is None
    objects = sqlite_objects(path)
    assert objects["table"] == {"alembic_version"}, "only Alembic's bookkeeping table is left"
    assert objects["view"] == set()
    assert objects["index"] == set()

    migrate.upgrade(engine, "head")
    assert migrate.current_revision(engine) == migrate.HEAD
    assert schema_sql(path) == fresh[migrate.HEAD]
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM exclusion_reasons")).scalar() == len(
            EXCLUSION_REASONS
        )


def test_data_written_at_revision_0001_survives_upgrade_and_reads_through_score_records(
    tmp_path, opened
):
    path = tmp_path / "council.db"
    make_council_db_at(path, "0001")
    connection = sqlite3.connect(path)
    try:
        connection.executescript(
            """
            INSERT INTO models (id, name) VALUES (1, 'judge-a'), (2, 'candidate-b');
            INSERT INTO scales (id, name, low, high) VALUES (1, '1-10', 1, 10);
            INSERT INTO sessions (id, session_key, ts_us, timestamp, consent_level, schema_version,
                                  category, language)
                VALUES (1, 'session-1', 1700000000000000, '2023-11-14T22:13:20Z', 2, '1.2.0',
                        'coding', 'en');
            INSERT INTO scores (session_id, reviewer_id, model_id, position, response_length_chars,
                                score_value, scale_id, display_order, self_review, exclusion_id)
                VALUES (1, 1, 2, 0, 1234, 7.5, 1, 1, 0, NULL),
                       (1, 1, 2, 1, 99, 0, 1, 1, 0, 1);
            """
        )
        connection.commit()
    finally:
        connection.close()

    messages: list[str] = []
    database = opened(path, messages)

    assert migrate.current_revision(database.engine) == migrate.HEAD
    assert len(messages) == 1 and "upgraded" in messages[0]
    with database.engine.connect() as db:
        rows = [
            dict(row._mapping)
            for row in db.execute(text("SELECT * FROM score_records ORDER BY position"))
        ]
    assert len(rows) == 2
    first, second = rows
    assert first["session_id"] == "session-1"
    assert first["timestamp"] == "2023-11-14T22:13:20Z"
    assert first["ts_us"] == 1700000000000000
    assert (first["reviewer"], first["model"]) == ("judge-a", "candidate-b")
    assert first["score_value"] == 7.5
    assert first["score_scale"] == "1-10"
    assert first["response_length_chars"] == 1234
    assert first["excluded_because"] is None
    assert (first["category"], first["language"], first["consent_level"]) == ("coding", "en", 2)
    assert first["schema_version"] == "1.2.0"
    assert second["excluded_because"] == "unscored"


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


# -------------------------------------------------------------------------------- CLI


def test_cli_db_upgrade_current_downgrade_and_upgrade_again(tmp_path):
    db = tmp_path / "cli.db"

    created = run_cli(tmp_path, db, "db", "upgrade")
    assert created.returncode == 0, created.stderr
    assert f"(empty) -> {migrate.HEAD}" in created.stderr

    current = run_cli(tmp_path, db, "db", "current", "--format", "json")
    assert current.returncode == 0, current.stderr
    assert json.loads(current.stdout) == {
        "current": migrate.HEAD,
        "head": migrate.HEAD,
        "up_to_date": True,
    }

    down = run_cli(tmp_path, db, "db", "downgrade", "0001")
    assert down.returncode == 0, down.stderr
    assert f"{migrate.HEAD} -> 0001" in down.stderr
    assert json.loads(run_cli(tmp_path, db, "db", "current", "--format", "json").stdout) == {
        "current": "0001",
        "head": migrate.HEAD,
        "up_to_date": False,
    }
    assert sqlite_objects(db)["view"] == set()

    up = run_cli(tmp_path, db, "db", "upgrade")
    assert up.returncode == 0, up.stderr
    assert f"0001 -> {migrate.HEAD}" in up.stderr
    assert alembic_versions(db) == [migrate.HEAD]
    assert sqlite_objects(db)["view"] == EXPECTED_VIEWS

    again = run_cli(tmp_path, db, "db", "upgrade")
    assert again.returncode == 0, again.stderr
    assert f"already at {migrate.HEAD}" in again.stderr


def test_cli_db_history_json_lists_every_revision_newest_first(tmp_path):
    result = run_cli(tmp_path, tmp_path / "unused.db", "db", "history", "--format", "json")

    assert result.returncode == 0, result.stderr
    history = json.loads(result.stdout)
    revisions = [entry["revision"] for entry in history]
    assert revisions == list(reversed(revisions_oldest_first()))
    assert revisions[0] == migrate.HEAD
    assert history[-1]["down_revision"] is None
    for newer, older in zip(history, history[1:]):
        assert newer["down_revision"] == older["revision"]
    assert all(entry["message"] for entry in history)


def test_cli_db_path_prints_the_resolved_file_without_creating_it(tmp_path):
    result = run_cli(tmp_path, "sub/council.db", "db", "path")

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str((tmp_path / "sub" / "council.db").resolve())
    assert not (tmp_path / "sub").exists()


def test_cli_db_downgrade_without_a_revision_is_a_usage_error(tmp_path):
    result = run_cli(tmp_path, tmp_path / "council.db", "db", "downgrade")

    assert result.returncode == 2
    assert "Missing argument" in result.stderr


def test_cli_refuses_a_newer_database_with_an_error_and_leaves_it_untouched(tmp_path, opened):
    db = tmp_path / "newer.db"
    opened(db).engine.dispose()
    set_revision(db, "9999")
    before = (sha256(db), schema_sql(db))

    for args in (("db", "upgrade"), ("db", "downgrade", "0001"), ("stats",)):
        result = run_cli(tmp_path, db, *args)
        assert result.returncode == 1, (args, result.stderr)
        assert result.stderr.startswith("error: "), args
        assert "Upgrade council-db" in result.stderr, args
        assert "Traceback" not in result.stderr

    assert (sha256(db), schema_sql(db)) == before


def test_cli_db_upgrade_refuses_a_foreign_sqlite_file(tmp_path):
    db = tmp_path / "recipes.db"
    make_foreign_sqlite_file(db)

    result = run_cli(tmp_path, db, "db", "upgrade")

    assert result.returncode == 1
    assert sqlite_objects(db)["table"] == {"recipes"}


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
    import subprocess
    import sys

    script = ("import sys; from council_db.store.database import open_database; "
              "open_database('sqlite:///' + sys.argv[1], notify=lambda m: print(m))")
    for round_number in range(3):
        path = tmp_path / f"race{round_number}.db"
        processes = [subprocess.Popen([sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE) for _ in range(6)]
        outputs = [process.communicate(timeout=60) for process in processes]
        assert all(process.returncode == 0 for process in processes), [err for _, err in outputs]
        assert sum(out.count(b"created") for out, _ in outputs) == 1
