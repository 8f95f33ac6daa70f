"""Database.reading(): the same answers through SQLAlchemy (PostgreSQL, or a database opened
for writing) and through sqlite3 (a current SQLite file opened to read), and the read-only
commands' start-up does not import SQLAlchemy, Alembic or scipy where they are not needed."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime

import pytest

from council_db.store.database import open_database, open_reader
from tests.conftest import Cli, both_backends, simulated, write_jsonl

NAMES = "SELECT name FROM scales WHERE name IN :names ORDER BY name"


def _readers(db_url: str):
    """The database as a writer opens it (engine) and, on SQLite, as a reader does (sqlite3)."""
    written = open_database(db_url, notify=lambda _: None)
    yield written
    yield open_reader(db_url, notify=lambda _: None)
    written.engine.dispose()


@both_backends
def test_list_parameters_expand_and_an_empty_list_matches_nothing(db_url):
    for db in _readers(db_url):
        with db.reading() as reader:
            every = [name for (name,) in reader.rows("SELECT name FROM scales ORDER BY name")]
            assert [name for (name,) in reader.rows(NAMES, {"names": every[:2] + ["nope"]})] == every[:2]
            assert reader.rows(NAMES, {"names": []}) == []
            assert reader.scalar("SELECT COUNT(*) FROM scales WHERE id > :low", {"low": 0}) == len(every)
            assert reader.mapping("SELECT 1 AS one, 'x' AS letter") == {"one": 1, "letter": "x"}


@both_backends
def test_a_datetime_parameter_compares_with_stored_times_as_sqlalchemy_stores_them(db_url, tmp_path):
    records, _ = simulated(sessions=3, seed=1)

    assert Cli(db_url)("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0
    for db in _readers(db_url):
        with db.reading() as reader:
            (started,) = reader.rows("SELECT started_at FROM imports")[0]
            started = started if isinstance(started, datetime) else datetime.fromisoformat(started)
            at = started.replace(microsecond=0)  # a whole second: stored text has .000000, a bare one would not
            count = "SELECT COUNT(*) FROM imports WHERE started_at <= :t"
            assert reader.scalar(count, {"t": started}) == 1
            assert reader.scalar(count, {"t": at}) == (1 if started == at else 0)


@both_backends
def test_arrays_hold_the_rows_and_on_sqlite_skip_sqlalchemys_row_by_row_fetch(db_url, tmp_path, monkeypatch):
    """reader.array gives the rows of reader.rows, its list parameters bound alike; on SQLite the
    engine's reader takes them from the driver's cursor in its own transaction (SQLAlchemy's
    result fetched them one row object at a time: most of the Python API's window read)."""
    import numpy as np
    from sqlalchemy.engine import CursorResult

    records, _ = simulated(sessions=3, seed=1)
    assert Cli(db_url)("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0
    query = ("SELECT sc.session_id, sc.score_value FROM scores AS sc JOIN sessions AS s ON s.id = sc.session_id "
             "WHERE s.session_key IN :keys ORDER BY sc.session_id, sc.reviewer_id, sc.model_id, sc.position")
    dtype = np.dtype([("session", "i8"), ("score", "f8")])
    for db in _readers(db_url):
        with db.reading() as reader:
            keys = [key for (key,) in reader.rows("SELECT session_key FROM sessions ORDER BY id")][:2]
            expected = [tuple(row) for row in reader.rows(query, {"keys": keys})]
            if db.dialect == "sqlite":
                monkeypatch.setattr(CursorResult, "_fetchiter_impl", lambda _: iter(()))
            assert reader.array(query, dtype, {"keys": keys}).tolist() == expected and expected
            monkeypatch.undo()


def test_a_current_sqlite_file_is_read_without_sqlalchemy_and_gives_the_same_report(tmp_path):
    """bias-report on a current file reads through sqlite3; the same report as through the engine.
    Nor does the report import scipy: its import alone cost a small report a quarter second."""
    records, _ = simulated(sessions=30, seed=3)
    db = tmp_path / "council.db"

    cli = Cli(f"sqlite:///{db}")
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0
    script = ("import json, sys\nfrom council_db.cli.app import main\n"
              f"sys.argv = ['council-db', '--db', {str(db)!r}, 'bias-report', '--format', 'json', "
              "'--as-of', '2100-01-01']\n"
              "try:\n    main()\nexcept SystemExit:\n    pass\n"
              "heavy = ('sqlalchemy', 'alembic', 'scipy')\n"
              "print(json.dumps(sorted(m for m in heavy if m in sys.modules)), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
    through_engine = json.loads(cli("bias-report", "--format", "json", "--as-of", "2100-01-01").stdout)
    through_sqlite = json.loads(done.stdout)
    for report in (through_engine, through_sqlite):
        del report["generated_at"]
    assert through_sqlite == through_engine


HEAVY = ("sqlalchemy", "alembic", "scipy", "numpy", "pydantic", "msgspec", "rich")


@pytest.mark.parametrize(("args", "allowed"), [
    (["--help"], ()),
    (["--version"], ()),
    (["bias-report", "--help"], ("pydantic",)),  # typer's own option parsing uses pydantic
])
def test_help_and_version_import_no_database_or_statistics_library(args, allowed):
    script = ("import json, sys\nfrom council_db.cli.app import main\n"
              f"sys.argv = ['council-db', *{args!r}]\n"
              "try:\n    main()\nexcept SystemExit:\n    pass\n"
              f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    imported = json.loads(done.stderr.strip().splitlines()[-1])
    assert [m for m in imported if m not in allowed] == []
