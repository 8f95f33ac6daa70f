"""The writer's models rows: on SQLite the names an INSERT adds come back with their ids from
the INSERT itself (RETURNING), and only names stored before are read back by name; every row
as when every name was read back (ids, kinds, identities), over commits and a second import."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from council_db.ingest import importer
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.store import model_rows
from council_db.store.database import open_database, open_writer
from tests.conftest import session, write_jsonl

JUDGEBENCH = sorted((Path(__file__).parents[1] / "data" / "judgebench" / "outputs").glob("*arena_hard*.jsonl"))[0]


def imported(path: Path, folder: Path) -> list[list[tuple]]:
    """Three imports, the last of names the second stored, in transactions of 20 lines; the
    models and scores rows."""
    db = open_writer(f"sqlite:///{path}")
    people = write_jsonl(folder / "people.jsonl", [*session("s-1", reviewers=3), *session("s-2", models=6)])
    again = write_jsonl(folder / "again.jsonl", session("s-3"))
    import_files(db, [str(JUDGEBENCH)], options=FormatOptions("judgebench"))
    import_files(db, [str(people)], options=FormatOptions(reviewer_kind="human"))
    import_files(db, [str(again)])
    with sqlite3.connect(path) as stored:
        return [stored.execute("SELECT * FROM models ORDER BY id").fetchall(),
                stored.execute("SELECT * FROM scores ORDER BY session_id, reviewer_id, model_id, position").fetchall()]


@pytest.fixture
def template(tmp_path) -> Path:
    path = tmp_path / "template.db"
    open_database(f"sqlite:///{path}", notify=lambda _: None).dispose()
    return path


def test_new_names_are_not_read_back_and_every_row_is_as_when_they_were(tmp_path, template, monkeypatch):
    monkeypatch.setattr(importer, "COMMIT_EVERY_LINES", 20)
    read_back: list[str] = []
    select = model_rows.ModelRows.cache
    monkeypatch.setattr(model_rows.ModelRows, "cache",
                        lambda self, names: read_back.extend(names) or select(self, names))
    shutil.copyfile(template, tmp_path / "returned.db")
    returned = imported(tmp_path / "returned.db", tmp_path)
    returned_reads = list(read_back)
    monkeypatch.setattr(model_rows, "inserted_returning", lambda *_: None)  # every name read back, as before
    shutil.copyfile(template, tmp_path / "read.db")
    read = imported(tmp_path / "read.db", tmp_path)

    assert returned == read and len(returned[0]) > 20
    every_read = read_back[len(returned_reads):]
    assert returned_reads and len(returned_reads) == len(every_read) - len(returned[0])  # only names stored before
