"""Undo is safe (issue 27, items 1 and 10): after any sequence of imports, growing files and
``delete --import``, importing the same files again restores exactly what is missing, on
both backends. The store then holds what one import of each file into an empty database
holds: the same records (none lost, none doubled), each bad line kept once, derived tables
and references true; and importing the files yet again changes nothing.

The files share sessions and records the way real judge logs do: two files hold records
of the same sessions, some of them the same records (a copy, or FastChat's runs of one
bench, which share every session), and a third grows between imports (a log being written),
with a bad line in each part.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import text

from council_db.ingest.importer import import_files
from council_db.outlets.export import ExportFilter, records
from council_db.store.database import Database, open_database
from council_db.store.derived import check
from council_db.store.references import orphans
from tests.conftest import Cli, simulated

PER_SESSION = 16
SEQUENCES = [("sqlite", seed) for seed in range(8)] + [("postgresql", seed) for seed in range(3)]


def lines(records: list[dict], bad: str) -> str:
    return "".join(json.dumps(record) + "\n" for record in records) + bad + "\n"


class Files:
    """a.jsonl and b.jsonl share sessions 3-5 and, in them, some records; c.jsonl grows."""

    def __init__(self, folder: Path, seed: int):
        pool, _ = simulated(sessions=8, seed=seed)
        self.a, self.b, self.c = folder / "a.jsonl", folder / "b.jsonl", folder / "c.jsonl"
        self.a.write_text(lines([r for n, r in enumerate(pool[:6 * PER_SESSION]) if n % PER_SESSION < 12],
                                '{"not": "a record"}'), encoding="utf-8")
        self.b.write_text(lines([r for n, r in enumerate(pool) if n >= 3 * PER_SESSION and n % PER_SESSION >= 4],
                                "{broken"), encoding="utf-8")
        grown, _ = simulated(sessions=6, seed=seed + 100)
        self.parts = [lines(grown[n:n + 2 * PER_SESSION], f'"bad line {n}"') for n in range(0, len(grown),
                                                                                           2 * PER_SESSION)]
        self.c.write_text(self.parts.pop(0), encoding="utf-8")

    def all(self) -> list[Path]:
        return [self.a, self.b, self.c]

    def grow(self) -> None:
        if self.parts:
            with self.c.open("a", encoding="utf-8") as out:
                out.write(self.parts.pop(0))


def stored(db: Database) -> Counter:
    return Counter(json.dumps(record, sort_keys=True) for record in records(db, ExportFilter()))


def kept_bad_lines(db: Database) -> Counter:
    with db.engine.connect() as connection:
        return Counter(tuple(row) for row in connection.execute(text(
            "SELECT i.source, r.line_number, r.reason FROM rejected_lines AS r "
            "JOIN imports AS i ON i.id = r.import_id")))


def import_ids(db: Database, *, storing: bool = False) -> list[int]:
    """The imports there are; with ``storing``, only those that stored records."""
    with db.engine.connect() as connection:
        return [row[0] for row in connection.execute(text(
            "SELECT id FROM imports" + (" WHERE inserted > 0" if storing else "") + " ORDER BY id"))]


def run_sequence(db: Database, cli: Cli, files: Files, rng: random.Random) -> list[str]:
    """Random imports, growths and deletions (``delete --import N --yes``, at least two);
    what was done."""
    done: list[str] = []
    while len(done) < 10 or sum(step.startswith("delete") for step in done) < 2:
        choice = rng.random()
        existing = import_ids(db)
        if choice < 0.6 or not existing:
            path = rng.choice(files.all())
            import_files(db, [str(path)])
            done.append(f"import {path.name}")
        elif choice < 0.75:
            files.grow()
            done.append("grow c")
        else:  # mostly one that stored records: undoing one that stored none is the easy case
            storing = import_ids(db, storing=True)
            gone = rng.choice(storing if storing and rng.random() < 0.7 else existing)
            assert cli("delete", "--import", str(gone), "--yes").exit_code == 0
            done.append(f"delete {gone}")
    return done


@pytest.mark.parametrize(("backend", "seed"), SEQUENCES, indirect=["backend"],
                         ids=[f"{backend}-{seed}" for backend, seed in SEQUENCES])
def test_importing_the_files_again_after_any_imports_and_deletions_restores_exactly_what_is_missing(
        db, db_url, cli, tmp_path, request, seed):
    files = Files(tmp_path, seed)
    steps = run_sequence(db, cli, files, random.Random(seed))

    import_files(db, [str(path) for path in files.all()])

    cluster = None if db_url.startswith("sqlite") else request.getfixturevalue("pg_cluster")
    reference_url = f"sqlite:///{tmp_path / 'reference.db'}" if cluster is None else cluster.database()
    reference = open_database(reference_url, notify=lambda _: None)
    try:
        import_files(reference, [str(path) for path in files.all()])
        assert stored(db) == stored(reference), steps
        assert kept_bad_lines(db) == kept_bad_lines(reference), steps
    finally:
        reference.engine.dispose()
        if cluster is not None:
            cluster.drop(reference_url)
    assert not [finding for finding in check(db) if finding.wrong], steps
    assert not [finding for finding in orphans(db) if finding.extra], steps
    before = (stored(db), kept_bad_lines(db))
    again = import_files(db, [str(path) for path in files.all()])
    assert again.total("inserted") == 0 and (stored(db), kept_bad_lines(db)) == before, steps
