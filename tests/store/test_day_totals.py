"""The day totals that the views sum (migration 0010): true to the records however an import
brings them (batches cutting sessions, files growing, lines shuffled, repeated, undated),
found stale by db check after an edit by hand and rebuilt by --repair; on PostgreSQL a
DELETE by hand keeps them true itself. A batch's sums (numpy, on a grid or after a sort)
equal the totals' definition computed a row at a time."""

from __future__ import annotations

import random
from collections import defaultdict

import numpy as np
import pytest
from sqlalchemy import text

from council_db.ingest.importer import import_files
from council_db.store import day_sums
from council_db.store.database import Database, open_database
from council_db.store.day_sums import TABLES, TotalsRows, sums
from council_db.store.derived import DERIVED, check
from tests.conftest import Cli, both_backends, record, same_numbers, simulated, write_jsonl
from tests.outlets.test_export_identical import varied_lines
from tests.store.sqlite_files import url_for
from tests.store.test_derived_tables import by_hand
from tests.store.test_views import all_views

DAY_TOTALS = tuple(table for table in DERIVED if table.name in {t.name for t in TABLES})


def totals(url: str) -> dict[str, list[dict]]:
    """Every row of every day totals table, with names for ids (two databases number them apart)."""
    db = open_database(url, notify=lambda _: None)
    try:
        with db.engine.connect() as connection:
            names = {"reviewer_id": dict(connection.execute(text("SELECT id, name FROM models")).all()),
                     "scale_id": dict(connection.execute(text("SELECT id, name FROM scales")).all())}
            names["model_id"] = names["reviewer_id"]
            found = {}
            for table in TABLES:
                rows = [{name: names[name][value] if name in names else value for name, value in row._mapping.items()}
                        for row in connection.execute(text(f"SELECT * FROM {table.name}"))]
                found[table.name] = sorted(rows, key=lambda row: [row[name] for name in table.key])
            return found
    finally:
        db.engine.dispose()


def wrong(db: Database) -> dict[str, tuple[int, int, int]]:
    """Per day totals table: its (missing, extra, differing) rows."""
    return {finding.table: (finding.missing, finding.extra, finding.differing)
            for finding in check(db, tables=DAY_TOTALS)}


TRUE = {table.name: (0, 0, 0) for table in TABLES}


def varied_records() -> list[dict]:
    """Simulated sessions over ten days with unscored records, the varied store (no time, a
    1-5 scale, scores out of scale, positions left out) and a session of 1969."""
    lines, _ = simulated(sessions=60, seed=3, days=10, unscored_rate=0.05)
    return lines + varied_lines() + [record(session_id="old", timestamp="1969-12-31T23:59:59.5Z", score_value=7.0)]


@both_backends
def test_records_in_any_batches_files_and_order_give_the_totals_of_the_records(db, db_url, tmp_path, monkeypatch):
    from council_db.ingest import lines
    from council_db.store import writer

    monkeypatch.setattr(lines, "BATCH_LINES", 7)  # batches cut through nearly every session
    monkeypatch.setattr(writer, "BATCH_RECORDS", 7)
    records = varied_records()
    shuffled = random.Random(1).sample(records, len(records))
    third = len(records) // 3
    files = [write_jsonl(tmp_path / "first.jsonl", records[:third]),
             write_jsonl(tmp_path / "grown.jsonl", records[:2 * third]),  # what first held, and more
             write_jsonl(tmp_path / "all.jsonl", shuffled + [dict(records[5], score_value=1.0)])]  # a repeated key
    for path in files:
        import_files(db, [str(path)])

    assert wrong(db) == TRUE
    in_one_go = url_for(tmp_path / "in-one-go.db")
    assert Cli(in_one_go)("import", "-q", str(write_jsonl(tmp_path / "in-order.jsonl", records))).exit_code == 0
    assert same_numbers(totals(db_url), totals(in_one_go))


def test_sessions_before_1970_are_counted_on_their_utc_day(cli, db_path, tmp_path):
    """Half a second before 1970 is 1969-12-31 (revision 0008's SQLite view rounded the
    seconds towards zero and said 1970-01-01)."""
    lines = [record(session_id="old", timestamp="1969-12-31T23:59:59.5Z"),
             record(session_id="older", timestamp="1969-12-30T12:00:00-13:00"),
             record(session_id="new", timestamp="1970-01-01T00:00:00Z")]
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    found = [(row["day"], row["sessions"]) for row in all_views(url_for(db_path))["reviewer_daily"]]
    assert found == [("1969-12-31", 2), ("1970-01-01", 1)]


@both_backends
def test_check_finds_day_totals_edited_by_hand_and_repair_rebuilds_what_a_fresh_import_gives(cli, db, db_url,
                                                                                           tmp_path):
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", varied_records()))).exit_code == 0
    by_hand(db_url,
            "UPDATE scores SET score_value = 1.0 WHERE session_id = 4",
            "DELETE FROM model_day_totals WHERE model_id = (SELECT MIN(model_id) FROM model_day_totals)",
            "INSERT INTO day_totals (day, scale_id, sessions, records, known_lengths, score_sum, length_sum) "
            "VALUES (1, 1, 1, 1, 1, 5.0, 100.0)")

    found = wrong(db)
    assert found["reviewer_day_totals"][2] >= 1  # the edited scores' day
    assert found["model_day_totals"][0] >= 1 and found["day_totals"][1] == 1
    assert cli("db", "check").exit_code == 1
    assert cli("db", "check", "--repair").exit_code == 0
    assert wrong(db) == TRUE

    fresh = Cli(url_for(tmp_path / "fresh.db"))
    assert cli("export", "-o", str(tmp_path / "edited.jsonl")).exit_code == 0
    assert fresh("import", "-q", str(tmp_path / "edited.jsonl")).exit_code == 0
    assert same_numbers(all_views(db_url), all_views(fresh.db))


@both_backends
def test_deleting_sessions_and_scores_by_hand_leaves_day_totals_true_on_postgresql_and_repairable_on_sqlite(
        cli, db, db_url, backend, tmp_path):
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", varied_records()))).exit_code == 0
    statements = ["DELETE FROM scores WHERE session_id = 9 AND reviewer_id = (SELECT MIN(reviewer_id) FROM scores)",
                  "DELETE FROM scores WHERE session_id IN (1, 2, 3)", "DELETE FROM sessions WHERE id IN (1, 2, 3)"]
    if backend == "postgresql":  # its triggers delete a session's records and count its days again
        statements = [statements[0], "DELETE FROM sessions WHERE id IN (1, 2, 3)"]
    by_hand(db_url, *statements)

    if backend == "sqlite":
        assert wrong(db) != TRUE
        assert cli("db", "check", "--repair").exit_code == 0
    assert wrong(db) == TRUE
    assert all(all_views(db_url).values())


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_an_import_writes_the_day_totals_it_writes_on_sqlite(db_url, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", varied_records())
    sqlite_url = url_for(tmp_path / "council.db")
    for url in (sqlite_url, db_url):
        assert Cli(url)("import", "-q", str(source)).exit_code == 0
    assert same_numbers(totals(db_url), totals(sqlite_url))


def defined_totals(table, rows: TotalsRows) -> dict[tuple, tuple]:
    """A table's rows by their definition, one row at a time: the new rows' sums per key, and
    the sessions with a new row under the key and no row stored before it."""
    under: dict[tuple, list[int]] = defaultdict(list)
    for row in range(len(rows.new)):
        if rows.display_order[row] or not table.slots_only:
            under[tuple(int(getattr(rows, name)[row]) for name in table.key)].append(row)
    found = {}
    for key, members in under.items():
        new = [row for row in members if rows.new[row]]
        if not new:
            continue
        score = [float(rows.score[row]) for row in new]
        own = [float(rows.score[row]) for row in new if rows.self_review[row]]
        sessions = {int(rows.session_id[row]) for row in new} - {int(rows.session_id[row]) for row in members
                                                               if not rows.new[row]}
        known = [float(rows.length[row]) for row in new if rows.length[row] >= 0]  # -1: unknown
        value = {"sessions": len(sessions), "records": len(new), "self_reviews": len(own), "known_lengths": len(known),
                 "score_sum": sum(score), "score_sq_sum": sum(s * s for s in score), "self_score_sum": sum(own),
                 "length_sum": sum(known), "min_score": min(score), "max_score": max(score)}
        found[key] = tuple(value[name] for name in table.values)
    return found


@pytest.mark.parametrize("seed", range(12))
def test_a_batch_summed_on_a_grid_or_after_a_sort_gives_the_totals_of_their_definition(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 400))
    rows = TotalsRows(rng.integers(1, 60, count), rng.integers(739_000, 739_005, count), rng.integers(1, 6, count),
                      rng.integers(1, 6, count), rng.integers(1, 3, count), rng.integers(0, 5, count),
                      rng.random(count) < 0.7, rng.random(count) < 0.2, rng.integers(10, 101, count) / 10.0,
                      np.where(rng.random(count) < 0.1, -1, rng.integers(50, 5000, count)).astype(float),  # -1: unknown
                      rng.random(count) < (1.0 if seed % 3 else 0.7))
    on_a_grid = sums(TABLES, rows)
    monkeypatch.setattr(day_sums, "MAX_CELLS", 0)
    after_a_sort = sums(TABLES, rows)
    for table in TABLES:
        expected = defined_totals(table, rows)
        for found in (on_a_grid, after_a_sort):
            columns = found.get(table.name, [[]] * len(table.columns))
            keys = len(table.key)
            got = {tuple(int(c[n]) for c in columns[:keys]): tuple(float(c[n]) for c in columns[keys:])
                   for n in range(len(columns[0]))}
            assert got.keys() == expected.keys(), table.name
            for key, value in expected.items():
                assert got[key] == pytest.approx(value, rel=1e-12), (table.name, key)
