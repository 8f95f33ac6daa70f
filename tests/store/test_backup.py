"""council-db db backup and restore: a consistent, private copy even while an import runs,
never an overwrite without --force, and a restore that gives back exactly what was saved."""

from __future__ import annotations

import sqlite3
import subprocess
from collections import Counter

from typer.testing import CliRunner

from council_db.cli.app import app
from tests.conftest import Cli, session, write_jsonl
from tests.reliability import (
    council_db_argv,
    file_records,
    integrity,
    is_prefix,
    simulated_file,
    stored_records,
)
from tests.store.sqlite_files import set_revision


def test_backups_taken_while_an_import_runs_are_sound_private_prefixes_of_the_file(tmp_path):
    source = simulated_file(tmp_path / "bias_metrics.jsonl", 1_500, seed=3)
    expected = file_records(source)
    db_path = tmp_path / "council.db"
    assert Cli(db_path)("db", "upgrade").exit_code == 0
    importer = subprocess.Popen(council_db_argv(db_path, "import", "-q", str(source), commit_every=2_000),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    during = []
    while importer.poll() is None:
        target = tmp_path / f"backup-{len(during)}.db"
        backup = subprocess.run(council_db_argv(db_path, "db", "backup", str(target)), capture_output=True,
                                timeout=120)
        assert backup.returncode == 0, backup.stderr.decode()
        if importer.poll() is None:
            during.append(target)
    _, stderr = importer.communicate(timeout=120)
    assert importer.returncode == 0, stderr.decode()

    assert during, "no backup finished while the import ran"
    for target in during:
        assert target.stat().st_mode & 0o777 == 0o600
        assert integrity(target) == "ok"
        assert is_prefix(stored_records(target), expected), f"{target.name} is not one moment of the import"
    final = tmp_path / "final.db"
    assert Cli(db_path)("db", "backup", str(final)).exit_code == 0
    assert stored_records(final) == Counter(expected)


def test_a_backup_never_replaces_an_existing_file_without_force(tmp_path):
    cli = Cli(tmp_path / "council.db")
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", session())))
    target = tmp_path / "saved.db"
    target.write_bytes(b"precious")

    refused = cli("db", "backup", str(target))
    assert refused.exit_code == 1 and "already exists" in str(refused.exception)
    assert target.read_bytes() == b"precious"
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []

    replaced = cli("db", "backup", "--force", str(target))
    assert replaced.exit_code == 0 and "16 records" in replaced.stderr
    assert integrity(target) == "ok" and sum(stored_records(target).values()) == 16


def test_restoring_a_backup_gives_back_its_records_while_another_connection_has_the_database_open(tmp_path):
    db_path = tmp_path / "council.db"
    cli = Cli(db_path)
    cli("import", str(write_jsonl(tmp_path / "a.jsonl", session("kept"))))
    assert cli("db", "backup", str(tmp_path / "saved.db")).exit_code == 0
    saved = stored_records(tmp_path / "saved.db")
    cli("import", str(write_jsonl(tmp_path / "b.jsonl", session("after-the-backup"))))
    reader = sqlite3.connect(db_path)
    assert reader.execute("SELECT count(*) FROM scores").fetchone() == (32,)

    refused = cli("db", "restore", str(tmp_path / "saved.db"))
    assert refused.exit_code == 1 and "--force" in str(refused.exception)
    restored = cli("db", "restore", "--force", str(tmp_path / "saved.db"))

    assert restored.exit_code == 0, restored.output
    assert reader.execute("SELECT count(*) FROM scores").fetchone() == (16,), "open connections see the restore"
    reader.close()
    assert integrity(db_path) == "ok"
    assert stored_records(db_path) == saved
    assert cli("import", str(tmp_path / "b.jsonl")).exit_code == 0, "the restored database takes imports"


def test_restoring_into_a_new_file_creates_it_private(tmp_path, cli):
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", session())))
    cli("db", "backup", str(tmp_path / "saved.db"))
    target = tmp_path / "new" / "restored.db"

    result = Cli(target)("db", "restore", str(tmp_path / "saved.db"))

    assert result.exit_code == 0, result.output
    assert target.stat().st_mode & 0o777 == 0o600 and target.parent.stat().st_mode & 0o777 == 0o700
    assert stored_records(target) == stored_records(tmp_path / "council.db")


def test_restore_refuses_a_damaged_or_foreign_or_newer_backup_and_leaves_the_database_alone(tmp_path):
    db_path = tmp_path / "council.db"
    cli = Cli(db_path)
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", session())))
    cli("db", "backup", str(tmp_path / "newer.db"))
    set_revision(tmp_path / "newer.db", "9999")
    (tmp_path / "junk.db").write_bytes(b"not a database at all" * 100)
    foreign = sqlite3.connect(tmp_path / "foreign.db")
    foreign.execute("CREATE TABLE recipes (name TEXT)")
    foreign.close()
    before = stored_records(db_path)

    for name, complaint in (("newer.db", "newer council-db"), ("junk.db", "not a readable SQLite database"),
                            ("foreign.db", "not a council-db database"), ("missing.db", "no such backup")):
        result = cli("db", "restore", "--force", str(tmp_path / name))
        assert result.exit_code == 1 and complaint in str(result.exception), (name, result.exception)
    assert stored_records(db_path) == before


def test_backup_and_restore_of_a_server_database_point_to_its_own_tools(tmp_path):
    for command in ("backup", "restore"):
        result = CliRunner().invoke(app, ["--db", "postgresql://user@127.0.0.1/council", "db", command,
                                          str(tmp_path / "x.db")])
        assert result.exit_code == 1 and "pg_dump" in str(result.exception)


def test_a_backup_removes_partial_files_that_killed_backups_left_and_keeps_live_ones(tmp_path):
    cli = Cli(tmp_path / "council.db")
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", session())))
    backups = tmp_path / "backups"
    backups.mkdir()
    killed = subprocess.Popen(council_db_argv(tmp_path / "council.db", "db", "backup", str(backups / "saved.db")),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killed.kill()
    killed.wait()
    running = subprocess.Popen(["sleep", "60"])  # a backup still at work: its partial file must stay
    try:
        stale = backups / f".saved.db.{killed.pid}.partial"
        live = backups / f".saved.db.{running.pid}.partial"
        other = backups / f".other.db.{killed.pid}.partial"
        for planted in (stale, live, other):
            planted.write_bytes(b"half a backup")

        assert cli("db", "backup", str(backups / "saved.db")).exit_code == 0

        assert sorted(p.name for p in backups.iterdir()) == sorted([live.name, other.name, "saved.db"])
    finally:
        running.kill()
        running.wait()
