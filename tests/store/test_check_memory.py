"""db check reads only what may have changed since the last clean check (store/check_memory.py,
revision 0021): edits by hand and council-db's own writes mark their ranges, a clean store's
second check reads no range, and --full reads every range as before."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import text

from council_db.store import check_memory, db_check, derived
from tests.conftest import both_backends
from tests.store.test_derived_tables import by_hand


def _imported(cli, tmp_path, *, seed: int = 3, end: str = "2026-06-30", days: str = "60", sessions: str = "60") -> None:
    source = tmp_path / f"sim{seed}.jsonl"
    cli("simulate", "-o", str(source), "--sessions", sessions, "--seed", str(seed), "--end", end, "--days", days)
    assert cli("import", "-q", str(source)).exit_code == 0


def _checked(cli, *options: str) -> tuple[int, list[dict], str]:
    """(exit code, the JSON rows, stderr) of ``db check``."""
    result = cli("db", "check", "--json", *options)
    return result.exit_code, json.loads(result.stdout), result.stderr


def _clean(cli, tmp_path) -> None:
    """A store whose first check (a full one) found it clean and recorded so."""
    _imported(cli, tmp_path)
    code, rows, stderr = _checked(cli)
    assert code == 0 and "checked all" in stderr and "no clean check recorded yet" in stderr
    assert all(row["checked_ranges"] == row["ranges"] for row in rows)


def _marks(db) -> set[tuple[str, int]]:
    with db.engine.connect() as connection:
        return {(unit, number) for unit, number in connection.execute(text("SELECT unit, number FROM check_marks"))}


@both_backends
def test_a_clean_stores_second_check_reads_no_range(cli, db, tmp_path, monkeypatch):
    _clean(cli, tmp_path)
    compared = []
    differences = derived._differences
    monkeypatch.setattr(derived, "_differences", lambda connection, table, *rest: compared.append(table.name)
                        or differences(connection, table, *rest))
    scope = check_memory.scope(db)
    code, rows, stderr = _checked(cli)
    assert code == 0 and not compared
    assert scope.checked == 0 and not scope.full and scope.ranges > 0
    assert f"0 of {scope.ranges:,} ranges changed since the last clean check" in stderr
    assert "--full checks all" in stderr
    assert {row["checked_ranges"] for row in rows if row["table"] != "models.model_of"} == {0}
    assert all(row["rows"] == 0 for row in rows if row["table"] != "models.model_of")
    assert all(row["last_clean_check"] for row in rows)


EDITS = {
    "update-score": "UPDATE scores SET score_value = score_value + 0.5 WHERE session_id = 9 "
                    "AND reviewer_id = (SELECT MIN(reviewer_id) FROM scores WHERE session_id = 9) "
                    "AND model_id = (SELECT MIN(model_id) FROM scores WHERE session_id = 9)",
    "delete-score": "DELETE FROM scores WHERE session_id = 9 "
                    "AND reviewer_id = (SELECT MIN(reviewer_id) FROM scores WHERE session_id = 9)",
    # a record no trigger sees: found by its range's count
    "insert-score": "INSERT INTO scores (session_id, reviewer_id, model_id, position, response_length_chars, "
                    "score_value, scale_id, display_order, self_review) SELECT session_id, reviewer_id, model_id, "
                    "position + 100, response_length_chars, score_value, scale_id, display_order, self_review "
                    "FROM scores WHERE session_id = 9 ORDER BY reviewer_id, model_id LIMIT 1",
    "delete-stats": "DELETE FROM session_stats WHERE session_id = 12",
    "update-day-total": "UPDATE day_totals SET records = records + 1 WHERE day = (SELECT MAX(day) FROM day_totals)",
    "insert-day-total": "INSERT INTO day_totals (day, scale_id, sessions, records, known_lengths, score_sum, "
                        "length_sum) SELECT day + 1000, scale_id, sessions, records, known_lengths, score_sum, "
                        "length_sum FROM day_totals WHERE day = (SELECT MAX(day) FROM day_totals)",
    "move-session": "UPDATE sessions SET ts_us = ts_us - 86400000000 * 20 WHERE id = 30",
    "orphan-model": "UPDATE scores SET model_id = 999999 WHERE session_id = 40 "
                    "AND reviewer_id = (SELECT MIN(reviewer_id) FROM scores WHERE session_id = 40)",
}


@both_backends
@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edit_by_hand_is_found_by_the_default_check(cli, db, db_url, tmp_path, edit):
    """What --full finds, the default check finds, reading only the ranges the edit changed."""
    _clean(cli, tmp_path)
    by_hand(db_url, EDITS[edit])
    scope = check_memory.scope(db)
    assert not scope.full and scope.checked > 0
    code, rows, stderr = _checked(cli)
    assert code == 1 and "changed since the last clean check" in stderr
    full_code, full_rows, full_stderr = _checked(cli, "--full")
    assert full_code == 1 and "checked all" in full_stderr
    wrong = {row["table"]: (row["missing"], row["extra"], row["differing"]) for row in full_rows
             if row["missing"] + row["extra"] + row["differing"]}
    assert wrong and wrong == {row["table"]: (row["missing"], row["extra"], row["differing"]) for row in rows
                               if row["missing"] + row["extra"] + row["differing"]}


def test_a_check_that_finds_wrong_rows_records_nothing_and_repair_then_records_clean(cli, db, db_url, tmp_path):
    _clean(cli, tmp_path)
    by_hand(db_url, EDITS["update-score"])
    assert cli("db", "check").exit_code == 1
    assert cli("db", "check").exit_code == 1  # the marks stay until a clean check
    code, _, stderr = _checked(cli, "--repair")
    assert code == 0 and "once repaired" in stderr
    assert cli("db", "check").exit_code == 0  # the repair's own rewrites are read again, and found true
    assert check_memory.scope(db).checked == 0


def test_full_gives_the_rows_of_the_check_without_a_scope(cli, db, db_url, tmp_path):
    _clean(cli, tmp_path)
    by_hand(db_url, EDITS["update-score"], EDITS["delete-stats"], EDITS["orphan-model"])
    code, rows, _ = _checked(cli, "--full")
    findings, orphans = db_check.check(db)
    assert code == 1 and [{k: row[k] for k in finding.as_row()} for row, finding in zip(rows, findings + orphans)] \
        == [finding.as_row() for finding in findings + orphans]


@both_backends
def test_an_import_marks_the_session_ranges_it_stores_in_and_the_check_reads_their_days(cli, db, tmp_path):
    _clean(cli, tmp_path)
    before = check_memory.scope(db)
    # 30 sessions of one week, long after the first import's
    _imported(cli, tmp_path, seed=4, end="2026-09-30", days="5", sessions="30")
    assert _marks(db) == {("sessions", 0)}
    scope = check_memory.scope(db)
    with db.engine.connect() as connection:
        days = {number for (number,) in connection.execute(text(
            f"SELECT DISTINCT {check_memory.SESSION_DAY_RANGE} FROM sessions AS s"))}
    assert {first // check_memory.DAYS_PER_RANGE for first, _ in scope.days} == days  # every session is in range 0
    assert scope.sessions == ((0, check_memory.SESSIONS_PER_RANGE - 1),) and scope.day_ranges > before.day_ranges
    assert cli("db", "check").exit_code == 0 and _marks(db) == set()


def test_an_import_into_a_later_session_range_marks_only_it(cli, db, db_path, tmp_path):
    _clean(cli, tmp_path)
    by_hand(f"sqlite:///{db_path}", "INSERT INTO sessions (id, session_key, timestamp, consent_level, schema_version) "
            "VALUES (39999, 'placeholder', '2026-01-01T00:00:00Z', 1, '1.0.0')")  # new ids from 40,000: range 2
    assert cli("db", "check").exit_code == 0
    _imported(cli, tmp_path, seed=5, end="2026-09-30", days="5", sessions="20")
    assert _marks(db) == {("sessions", 2)}
    scope = check_memory.scope(db)
    assert scope.sessions == ((40_000, 59_999),) and 1 <= len(scope.days) <= 2


@both_backends
def test_deleting_a_session_marks_its_session_and_day_ranges(cli, db, tmp_path):
    _clean(cli, tmp_path)
    with db.engine.connect() as connection:
        key, number = connection.execute(text(
            f"SELECT session_key, {check_memory.SESSION_DAY_RANGE} FROM sessions AS s WHERE id = 20")).one()
    assert cli("delete", "--session", key, "--yes").exit_code == 0
    assert {("sessions", 0), ("days", number)} <= _marks(db)
    assert cli("db", "check").exit_code == 0


def test_pack_marks_the_ranges_it_packs_and_the_check_verifies_them(cli, db, tmp_path):
    _clean(cli, tmp_path)
    assert cli("db", "pack").exit_code == 0
    assert ("sessions", 0) in _marks(db)
    code, rows, _ = _checked(cli)
    (packed,) = [row for row in rows if row["table"] == "packed_records"]
    assert code == 0 and packed["checked_ranges"] == 1 and packed["rows"] > 0


def test_a_mark_made_while_the_check_ran_outlives_its_clean_record(cli, db, db_url, tmp_path):
    """The check clears only the marks it read, as it read them: a range changed again after
    that stays marked for the next check."""
    _clean(cli, tmp_path)
    by_hand(db_url, EDITS["delete-stats"])
    scope = check_memory.scope(db)
    by_hand(db_url, "DELETE FROM session_stats WHERE session_id = 13")  # during the check
    assert check_memory.record_clean(db, scope)
    assert ("sessions", 0) in _marks(db)
    assert cli("db", "check").exit_code == 1


def test_a_read_only_store_is_checked_and_says_its_clean_check_is_not_recorded(tmp_path):
    from tests import unprivileged
    from tests.store.test_read_only_open import filled

    if unprivileged.why_unavailable() is not None:
        pytest.skip(str(unprivileged.why_unavailable()))
    db_path = filled(tmp_path / "council.db")
    db_path.chmod(0o444)
    result = unprivileged.run("--db", str(db_path), "db", "check")
    stderr = result.stderr.decode()
    assert result.returncode == 0, stderr
    assert "checked all" in stderr and "this clean check is not recorded" in stderr
    assert "every row true to the records" in stderr


@both_backends
def test_undoing_an_import_marks_its_ranges_and_every_reference(cli, db, tmp_path):
    _clean(cli, tmp_path)
    _imported(cli, tmp_path, seed=4, end="2026-09-30", days="5", sessions="30")
    assert cli("db", "check").exit_code == 0 and _marks(db) == set()
    with db.engine.connect() as connection:
        last = connection.execute(text("SELECT MAX(id) FROM imports")).scalar_one()
    assert cli("delete", "--import", str(last), "--yes").exit_code == 0
    assert {("sessions", 0), ("refs", 0)} <= _marks(db)
    scope = check_memory.scope(db)
    assert scope.references and scope.sessions == ((0, check_memory.SESSIONS_PER_RANGE - 1),)
    assert cli("db", "check").exit_code == 0


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_truncate_on_postgresql_makes_the_next_check_a_full_one(cli, db, db_url, tmp_path):
    _clean(cli, tmp_path)
    by_hand(db_url, "TRUNCATE session_stats")
    scope = check_memory.scope(db)
    code, rows, stderr = _checked(cli)
    (stats,) = [row for row in rows if row["table"] == "session_stats"]
    assert scope.full and scope.reason == "marked" and "checked all" in stderr
    assert code == 1 and stats["missing"] == 60
