"""An import into a current SQLite file writes through sqlite3 (store/plain_sqlite.py), without
SQLAlchemy or the schema's models: the same rows, resume points and summaries as through the
engine, import after import (a grown file, bad lines kept once, records another import stored,
reviewers re-marked, other options, --strict), and a start-up without either library."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from dataclasses import asdict
from pathlib import Path

import pytest

from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.store.database import Database, open_database, open_writer
from council_db.store.plain_sqlite import SqliteConnection
from tests.cli.test_startup import libraries, loaded_modules
from tests.conftest import session, write_jsonl
from tests.ingest.test_format_csv import FIXTURE, MAP

DIGIT = re.compile(r"\d")


def sessions(first: int, count: int, **changes) -> list[dict]:
    return [line for number in range(first, first + count) for line in session(f"s-{number:03d}", **changes)]


def grown(path: Path, lines: list) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)


def every_row(path: Path) -> dict[str, list[tuple]]:
    """Every table's rows in a fixed order: the files named from their folder, an import's
    times and a file's inode as their shape (they differ by run)."""
    connection = sqlite3.connect(path)
    try:
        tables = [name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                                         "ORDER BY name")]
        found = {}
        for table in tables:
            cursor = connection.execute(f"SELECT * FROM {table}")
            names = [column[0] for column in cursor.description]
            found[table] = sorted((tuple(_seen(name, value, path.parent) for name, value in zip(names, row))
                                   for row in cursor), key=repr)
        return found
    finally:
        connection.close()


def _seen(column: str, value, folder: Path):
    if column in ("started_at", "finished_at", "file_identity") and value:
        return DIGIT.sub("d", value)
    return value.replace(str(folder), "FOLDER") if isinstance(value, str) else value


def imports(db: Database, folder: Path) -> list[list[dict]]:
    """One sequence of imports; each one's summary."""
    log = write_jsonl(folder / "bias_metrics.jsonl", [*sessions(0, 6), "{not json", *sessions(6, 2)])
    csv_file = folder / "scores.csv"
    shutil.copyfile(FIXTURE, csv_file)
    by_csv = FormatOptions("csv", mapping=tuple(sorted(MAP)))
    done = [import_files(db, [str(log)])]
    grown(log, [*sessions(8, 3), [1]])
    done.append(import_files(db, [str(log)]))  # read from where the first stopped
    shutil.copyfile(log, folder / "copy.jsonl")
    done.append(import_files(db, [str(folder / "copy.jsonl")]))  # records another import stored
    people = write_jsonl(folder / "people.jsonl", sessions(20, 2))
    done.append(import_files(db, [str(people)], options=FormatOptions(reviewer_kind="human")))  # re-marked
    done.append(import_files(db, [str(csv_file)], options=by_csv))
    done.append(import_files(db, [str(csv_file)], options=FormatOptions("csv", mapping=by_csv.mapping, scale="1-10")))
    strict = write_jsonl(folder / "strict.jsonl", [*sessions(30, 1), "{"])
    done.append(import_files(db, [str(strict)], strict=True))
    return [[{**file.as_json(), "rejected_lines": [asdict(r) for r in file.rejected_lines]} for file in summary.files]
            for summary in done]


@pytest.fixture
def template(tmp_path) -> Path:
    """A current SQLite file, copied for each side so both hold the same local keys."""
    path = tmp_path / "template.db"
    open_database(f"sqlite:///{path}", notify=lambda _: None).engine.dispose()
    return path


def test_an_import_through_sqlite3_stores_every_row_and_summary_the_engines_import_does(tmp_path, template):
    found = {}
    for side in ("engine", "plain"):
        folder = tmp_path / side
        folder.mkdir()
        path = folder / "council.db"
        shutil.copyfile(template, path)
        url = f"sqlite:///{path}"
        db = open_database(url) if side == "engine" else open_writer(url)
        with db.bulk_writer() as connection:
            assert isinstance(connection, SqliteConnection) == (side == "plain")
        summaries = imports(db, folder)
        db.dispose()
        shown = json.dumps(summaries, default=bytes.hex).replace(str(folder), "FOLDER")
        found[side] = (every_row(path), json.loads(shown))

    rows, summaries = found["plain"]
    assert summaries == found["engine"][1]
    assert rows == found["engine"][0]
    assert [file["status"] for step in summaries for file in step] == ["complete"] * 6 + ["strict-failed"]
    assert summaries[1][0]["mode"] == "incremental" and summaries[1][0]["rejected"] == 1
    assert summaries[2][0]["duplicates"] > 0 and rows["import_overlaps"]
    assert summaries[3][0]["remarked"] and "other options" in summaries[5][0]["note"]


def test_open_writer_takes_sqlite3_only_for_a_current_file(tmp_path, template):
    new = tmp_path / "new.db"

    assert open_writer(f"sqlite:///{template}").plain_writes
    assert not open_writer(f"sqlite:///{new}", notify=lambda _: None).plain_writes  # created by the engine


def test_an_import_into_a_current_sqlite_file_loads_neither_sqlalchemy_nor_the_models(tmp_path, template):
    log = write_jsonl(tmp_path / "bias_metrics.jsonl", sessions(0, 3))

    modules = loaded_modules("--db", str(template), "import", "-q", str(log))

    assert "sqlalchemy" not in libraries(modules)
    assert "council_db.store.models" not in modules
    with sqlite3.connect(template) as stored:
        assert stored.execute("SELECT status FROM imports").fetchall() == [("complete",)]
        assert stored.execute("SELECT COUNT(*) FROM scores").fetchone() == (48,)
