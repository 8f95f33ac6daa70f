"""`council-db db ...`: upgrade, current, downgrade, history and path from the command line,
with clear errors for a newer or foreign database."""

from __future__ import annotations

import json

from council_db.store import migrate
from tests.store.sqlite_files import (
    EXPECTED_VIEWS,
    alembic_versions,
    make_foreign_sqlite_file,
    revisions_oldest_first,
    run_cli,
    schema_sql,
    set_revision,
    sha256,
    sqlite_objects,
)

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
