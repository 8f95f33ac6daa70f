"""packed_records (revision 0020), on a store that `db pack` turned it on for, holds what the
usable scores say, per (session, scale), through import, re-import, a session gaining records
in a later import, re-marked reviewers, deleting a session, pruning and undoing an import; db
check finds a damaged string and --repair mends it; packing a filled store gives what packing
at import gives, and --off removes it. A default store keeps none: its writer writes no part,
db check ignores the table. Read back here with plain SQL and np.frombuffer of the documented
layout."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import text

from council_db.errors import CouncilDbError
from council_db.store import db_check, migrate, packed_check, packing
from council_db.store.database import open_database
from tests.conftest import Cli, both_backends, run_module, session, write_jsonl
from tests.store.sqlite_files import sqlite_objects
from tests.store.test_derived_tables import by_hand
from tests.store.test_migration_data import filled_at

# docs/storage.md: reviewer, model, slot, length as little-endian int32, score as float64
DOCUMENTED = np.dtype([("reviewer", "<i4"), ("model", "<i4"), ("slot", "<i4"), ("length", "<i4"), ("score", "<f8")])
USABLE = ("SELECT session_id, scale_id, reviewer_id, model_id, CASE WHEN display_order THEN position ELSE -1 END, "
          "response_length_chars, score_value FROM scores WHERE exclusion_id IS NULL")


def _from_scores(db) -> dict[tuple[int, int], list[tuple]]:
    with db.engine.connect() as connection:
        rows = connection.execute(text(USABLE)).all()
    out: dict[tuple[int, int], list[tuple]] = {}
    for session_id, scale_id, *record in rows:
        out.setdefault((session_id, scale_id), []).append(tuple(record))
    return {key: sorted(records) for key, records in out.items()}


def _from_packed(db) -> dict[tuple[int, int], list[tuple]]:
    with db.engine.connect() as connection:
        rows = connection.execute(text("SELECT session_id, scale_id, data FROM packed_records")).all()
    out: dict[tuple[int, int], list[tuple]] = {}
    for session_id, scale_id, data in rows:
        out.setdefault((session_id, scale_id), []).extend(
            (int(r), int(m), int(s), int(n), float(v)) for r, m, s, n, v in np.frombuffer(bytes(data), DOCUMENTED))
    return {key: sorted(records) for key, records in out.items()}


def _parts(db) -> int:
    with db.engine.connect() as connection:
        return connection.execute(text("SELECT COUNT(*) FROM packed_records")).scalar_one()


def _true_to_scores(db) -> None:
    assert _from_packed(db) == _from_scores(db)
    (finding,) = packed_check.check(db)
    assert not finding.wrong


def _first_file() -> list[dict]:
    """A dated session, an undated one, one on a 1-5 scale, with an unscored and an out-of-scale record."""
    lines = session("dated", timestamp="2025-06-01T10:00:00+00:00") + session("undated", timestamp=None)
    lines += session("five", models=3, reviewers=2, score_scale="1-5", score_value=4.0,
                     timestamp="2025-12-01T10:00:00+00:00")
    lines[0]["score_value"], lines[1]["score_value"] = 0.0, 11.0  # unscored, out of scale: not packed
    return lines


def _fifth_judge() -> list[dict]:
    """The dated session of ``_first_file`` scored again by a fifth reviewer: its second part."""
    dated = session("dated", timestamp="2025-06-01T10:00:00+00:00")
    return [dict(line, reviewer_id="vendor/judge-5") for line in dated]


@both_backends
def test_the_packed_records_are_what_the_usable_scores_say_through_every_write(cli, db, tmp_path):
    assert cli("db", "pack").exit_code == 0  # an empty store: the writer packs from the first import on
    first = write_jsonl(tmp_path / "first.jsonl", _first_file())
    assert cli("import", "-q", str(first)).exit_code == 0
    _true_to_scores(db)
    assert _parts(db) == 3 and sum(map(len, _from_packed(db).values())) == 16 + 16 + 6 - 2

    assert cli("import", "-q", str(first)).exit_code == 0  # nothing new: no part added
    assert _parts(db) == 3

    later = [dict(line, reviewer_id="vendor/judge-5")  # a fifth reviewer
             for line in session("dated", timestamp="2025-06-01T10:00:00+00:00")[:4]]
    assert cli("import", "-q", str(write_jsonl(tmp_path / "later.jsonl", later))).exit_code == 0
    assert _parts(db) == 4  # the dated session's second part
    _true_to_scores(db)

    assert cli("reviewers", "--kind", "human", "vendor/model-1", "--yes").exit_code == 0  # no record changes
    _true_to_scores(db)

    with db.engine.connect() as connection:
        latest = connection.execute(text("SELECT MAX(id) FROM imports")).scalar_one()
    assert cli("delete", "--import", str(latest), "--yes").exit_code == 0  # the dated session packed again
    assert _parts(db) == 3
    _true_to_scores(db)

    assert cli("delete", "--session", "undated", "--yes").exit_code == 0
    assert cli("prune", "--before", "2025-07-01T00:00:00+00:00", "--yes").exit_code == 0
    assert _parts(db) == 1 and list(_from_packed(db)) == list(_from_scores(db))
    _true_to_scores(db)


@both_backends
def test_db_check_finds_a_damaged_or_stale_string_and_repair_packs_the_session_again(cli, db, db_url, tmp_path):
    lines = [line for g in range(6) for line in session(f"s{g}", timestamp=f"2025-06-0{g + 1}T10:00:00+00:00")]
    assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    assert cli("db", "pack").exit_code == 0
    cut = "substr(data, 1, 20)" if db_url.startswith("sqlite") else "substring(data from 1 for 20)"
    by_hand(db_url, f"UPDATE packed_records SET data = {cut} WHERE session_id = 2",  # not whole records
            "UPDATE scores SET score_value = 1.0 WHERE session_id = 4 AND reviewer_id = 1",  # a stale string
            "DELETE FROM packed_records WHERE session_id = 5")
    findings, _ = db_check.check(db)
    (found,) = [finding for finding in findings if finding.table == "packed_records"]
    assert (found.missing, found.extra, found.differing) == (1, 0, 2)
    assert found.examples == ["differing (session_id=2, scale_id=1)", "differing (session_id=4, scale_id=1)",
                              "missing (session_id=5, scale_id=1)"]
    checked = cli("db", "check")
    assert checked.exit_code == 1 and "packed_records (5 rows): 1 missing, 0 extra, 2 differing" in checked.stderr

    assert cli("db", "check", "--repair").exit_code == 0
    _true_to_scores(db)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_corrupted_string_stops_the_every_session_pass_with_one_line_naming_the_repair(cli, db_url, tmp_path):
    cli("simulate", "-o", str(tmp_path / "sim.jsonl"), "--sessions", "60", "--seed", "3")
    assert cli("import", "-q", str(tmp_path / "sim.jsonl")).exit_code == 0
    assert cli("db", "pack").exit_code == 0
    by_hand(db_url, "UPDATE packed_records SET data = substr(data, 1, 20) WHERE session_id = 2")
    result = run_module("--db", db_url, "anomalies", "--every-session", "--sample-sessions", "30")
    assert result.returncode == 1 and "Traceback" not in result.stderr.decode()
    assert "packed_records of session id 2 is not a whole number" in result.stderr.decode()
    assert "council-db db check --repair rebuilds it" in result.stderr.decode()


def _options(db) -> list[tuple]:
    with db.engine.connect() as connection:
        return [tuple(row) for row in connection.execute(text("SELECT name, value FROM store_options"))]


def test_the_upgrade_packs_nothing_and_the_downgrade_drops_both_tables(tmp_path):
    path = filled_at(tmp_path, "0019")
    database = open_database(f"sqlite:///{path}", notify=lambda _: None)  # upgrades to head
    try:
        assert migrate.current_revision(database.engine) == migrate.HEAD
        assert _parts(database) == 0 and _options(database) == [] and not packing.is_on(database)
    finally:
        database.engine.dispose()
    cli = Cli(path)
    assert cli("db", "pack").exit_code == 0 and cli("db", "downgrade", "0019").exit_code == 0
    assert {"packed_records", "store_options"}.isdisjoint(sqlite_objects(path)["table"])
    assert cli("db", "upgrade").exit_code == 0
    database = open_database(f"sqlite:///{path}")
    try:
        assert _parts(database) == 0 and _options(database) == []  # the choice went with the downgrade
    finally:
        database.engine.dispose()


@both_backends
def test_a_default_store_writes_no_part_and_db_check_ignores_the_table(cli, db, db_url, tmp_path):
    first = write_jsonl(tmp_path / "first.jsonl", _first_file())
    assert cli("import", "-q", str(first)).exit_code == 0
    assert cli("import", "-q", str(write_jsonl(tmp_path / "later.jsonl", _fifth_judge()))).exit_code == 0
    assert cli("delete", "--import", "2", "--yes").exit_code == 0  # undoing an import packs nothing again
    assert _parts(db) == 0 and _options(db) == []
    by_hand(db_url, "INSERT INTO packed_records (session_id, scale_id, part, data) VALUES (1, 1, 0, 'x')")
    checked = cli("db", "check", "--json")
    assert checked.exit_code == 0 and "packed_records" not in checked.stdout + checked.stderr
    assert cli("db", "check", "--repair").exit_code == 0 and _parts(db) == 1  # not its business


@both_backends
def test_packing_a_filled_store_gives_what_packing_at_import_gives_and_off_then_on_again(cli, db, tmp_path):
    assert cli("db", "pack").exit_code == 0
    assert cli("import", "-q", str(write_jsonl(tmp_path / "first.jsonl", _first_file()))).exit_code == 0
    assert cli("import", "-q", str(write_jsonl(tmp_path / "later.jsonl", _fifth_judge()))).exit_code == 0
    at_import, parts = _from_packed(db), _parts(db)
    assert parts == 4 and at_import == _from_scores(db)  # the dated session in two parts

    for _ in range(2):  # --off, twice: the same
        off = cli("db", "pack", "--off")
        assert off.exit_code == 0 and _parts(db) == 0 and _options(db) == [] and not packing.is_on(db)
    assert "keeps no packed records" in off.stderr
    for _ in range(2):  # on again, twice: the same
        on = cli("db", "pack")
        assert on.exit_code == 0 and _from_packed(db) == at_import and _parts(db) == 3  # a part a (session, scale)
        assert _options(db) == [("packed_records", "on")]
    assert "packed already" in on.stderr
    _true_to_scores(db)


@both_backends
def test_an_interrupted_pack_is_trusted_by_nothing_and_done_whole_when_run_again(cli, db, db_url, tmp_path):
    assert cli("import", "-q", str(write_jsonl(tmp_path / "first.jsonl", _first_file()))).exit_code == 0
    by_hand(db_url, "INSERT INTO store_options (name, value) VALUES ('packed_records', 'packing')")
    assert cli("import", "-q", str(write_jsonl(tmp_path / "later.jsonl", _fifth_judge()))).exit_code == 0
    assert _parts(db) == 1 and not packing.is_on(db)  # the writer packs meanwhile; the copy is not whole
    assert "packed_records" not in cli("db", "check", "--json").stdout
    assert cli("db", "pack").exit_code == 0 and packing.is_on(db)
    _true_to_scores(db)


def test_db_pack_off_while_a_pack_runs_stops_it_and_leaves_no_copy(cli, db, tmp_path, monkeypatch):
    assert cli("import", "-q", str(write_jsonl(tmp_path / "first.jsonl", _first_file()))).exit_code == 0
    monkeypatch.setattr(packing, "SESSIONS_AT_ONCE", 1)  # a transaction a session: --off comes between two
    with pytest.raises(CouncilDbError, match="--off ran meanwhile"):
        packing.pack(db, lambda done, total: packing.unpack(db))
    assert _parts(db) == 0 and _options(db) == [] and not packing.is_on(db)
