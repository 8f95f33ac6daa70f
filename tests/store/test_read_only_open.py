"""A database you may read but not write (in a read-only directory, or a read-only file) can
still be read by every command that only reads; a command that writes says why it cannot.
Run as a process that file permissions apply to (tests/unprivileged.py)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests import unprivileged
from tests.conftest import run_module, session, write_jsonl

pytestmark = pytest.mark.skipif(unprivileged.why_unavailable() is not None, reason=str(unprivileged.why_unavailable()))


def filled(db_path: Path) -> Path:
    """council.db with one session, 16 records."""
    done = run_module("--db", str(db_path), "import", str(write_jsonl(db_path.parent / "in.jsonl", session())))
    assert done.returncode == 0, done.stderr.decode()
    return db_path


@pytest.fixture
def locked_folder(tmp_path: Path):
    """council.db with 16 records in a directory made read-only (made writable again after)."""
    folder = tmp_path / "shared"
    folder.mkdir()
    filled(folder / "council.db")
    (folder / "in.jsonl").unlink()
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


def records(db_path: Path) -> int:
    result = unprivileged.run("--db", str(db_path), "stats", "--format", "json")
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)["records"]


def test_read_commands_work_on_a_database_in_a_read_only_directory(locked_folder, tmp_path):
    db = str(locked_folder / "council.db")

    assert records(locked_folder / "council.db") == 16
    exported = unprivileged.run("--db", db, "export", "--format", "jsonl")
    current = unprivileged.run("--db", db, "db", "current", "--format", "json")
    backup = unprivileged.run("--db", db, "db", "backup", str(tmp_path / "saved.db"))

    assert exported.returncode == 0 and len(exported.stdout.splitlines()) == 16, exported.stderr.decode()
    assert current.returncode == 0 and json.loads(current.stdout)["up_to_date"] is True, current.stderr.decode()
    assert backup.returncode == 0 and "16 records" in backup.stderr.decode(), backup.stderr.decode()
    assert sorted(p.name for p in locked_folder.iterdir()) == ["council.db"]


def test_ad_hoc_sql_reads_a_database_in_a_read_only_directory(locked_folder):
    result = unprivileged.run("--db", str(locked_folder / "council.db"), "sql", "SELECT count(*) AS n FROM scores",
                              "--format", "json")

    assert result.returncode == 0, result.stderr.decode()
    assert json.loads(result.stdout) == [{"n": 16}]


def test_a_read_only_database_file_is_read_too(tmp_path):
    db_path = filled(tmp_path / "council.db")
    db_path.chmod(0o444)

    assert records(db_path) == 16


def test_a_reader_sees_what_a_running_writer_committed_to_the_wal(locked_folder):
    db_path = locked_folder / "council.db"
    writer = sqlite3.connect(db_path)  # this test process may write anywhere: it plays another user's importer
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")  # the change stays in the -wal file
        writer.execute("DELETE FROM scores WHERE model_id = (SELECT MIN(model_id) FROM scores)")  # 4 of 16
        writer.commit()

        assert (locked_folder / "council.db-wal").stat().st_size > 0
        assert records(db_path) == 12
    finally:
        writer.close()


def test_importing_into_a_read_only_directory_is_one_line_naming_the_database(locked_folder, tmp_path):
    data = write_jsonl(tmp_path / "more.jsonl", session("another"))

    result = unprivileged.run("--db", str(locked_folder / "council.db"), "import", str(data))

    text = result.stderr.decode()
    assert result.returncode == 1 and "Traceback" not in text and text.count("\n") == 1, text
    assert str(locked_folder / "council.db") in text and "cannot write" in text
