"""council-db db check runs its checks two at a time, and finds what it found one at a time."""

from __future__ import annotations

import threading
import time

import pytest

from council_db.store import db_check, derived, packed_check, references
from tests.conftest import both_backends
from tests.store.test_derived_tables import by_hand


def _simulated(cli, tmp_path) -> None:
    cli("simulate", "-o", str(tmp_path / "sim.jsonl"), "--sessions", "60", "--seed", "3")
    assert cli("import", "-q", str(tmp_path / "sim.jsonl")).exit_code == 0


def _as_rows(findings) -> list[dict]:
    return [finding.as_row() for finding in findings]


@both_backends
def test_the_checks_two_at_a_time_find_what_they_find_one_at_a_time(cli, db, db_url, tmp_path):
    _simulated(cli, tmp_path)
    assert cli("db", "pack").exit_code == 0  # packed_records checked too
    by_hand(db_url, "DELETE FROM session_stats WHERE session_id = 1",
            "UPDATE scores SET score_value = 1.0 WHERE session_id = 4",
            "UPDATE scores SET envelope_id = 999999 WHERE session_id = 7")  # no such envelope
    findings, orphans = db_check.check(db)
    assert _as_rows(findings) == _as_rows(derived.check(db) + packed_check.check(db))
    assert _as_rows(orphans) == _as_rows(references.orphans(db))
    assert sum(finding.wrong for finding in findings) > 0 and sum(finding.extra for finding in orphans) > 0


def test_checks_that_only_read_overlap_in_time(cli, db, tmp_path, monkeypatch):
    """Each check made to last 0.2 s: one after the other they could not overlap."""
    _simulated(cli, tmp_path)
    spans, check_table = [], derived._check_table

    def slow(database, table, repair, *rest):
        start = time.perf_counter()
        time.sleep(0.2)
        found = check_table(database, table, repair, *rest)
        spans.append((start, time.perf_counter(), threading.get_ident()))
        return found

    monkeypatch.setattr(derived, "_check_table", slow)
    db_check.check(db)
    spans.sort()
    assert len(spans) == len(derived.DERIVED)
    assert any(later[0] < earlier[1] for earlier, later in zip(spans, spans[1:]))
    assert len({thread for _, _, thread in spans}) == db_check.THREADS


def test_repair_runs_the_checks_one_after_the_other_references_first(cli, db, tmp_path, monkeypatch):
    """A deleted orphan changes the derived rows, so the references are repaired first."""
    _simulated(cli, tmp_path)
    order = []
    orphans, check = references.orphans, derived.check
    monkeypatch.setattr(references, "orphans", lambda *a, **k: order.append("references") or orphans(*a, **k))
    monkeypatch.setattr(derived, "check", lambda *a, **k: order.append("derived") or check(*a, **k))
    db_check.check(db, repair=True)
    assert order == ["references", "derived"]


def _compared(monkeypatch) -> list[str]:
    """The tables of every range compared row by row, as the check runs."""
    compared, differences = [], derived._differences

    def counted(connection, table, *rest):
        compared.append(table.name)
        return differences(connection, table, *rest)

    monkeypatch.setattr(derived, "_differences", counted)
    return compared


DAY_TABLES = tuple(table.name for table in derived.DERIVED if table.range_column == "day")


def test_day_totals_true_to_their_records_are_not_compared_row_by_row(cli, db, tmp_path, monkeypatch):
    _simulated(cli, tmp_path)
    compared = _compared(monkeypatch)
    findings, _ = db_check.check(db)
    assert sum(finding.wrong for finding in findings) == 0
    assert "session_stats" in compared and not set(compared) & set(DAY_TABLES)


SECOND_REVIEWER = "(SELECT MAX(reviewer_id) FROM reviewer_day_totals)"
FIRST_DAY = "(SELECT MIN(day) FROM reviewer_day_totals)"


@both_backends
@pytest.mark.parametrize("edits", [
    # one derived row: one column of one row, each kind of column
    ("UPDATE day_totals SET sessions = sessions + 1 WHERE day = (SELECT MIN(day) FROM day_totals)",),
    ("UPDATE model_day_totals SET length_sum = length_sum * 1.000001 "
     "WHERE day = (SELECT MAX(day) FROM model_day_totals) "
     "AND model_id = (SELECT MIN(model_id) FROM model_day_totals)",),
    (f"UPDATE reviewer_day_totals SET max_score = max_score + 1 WHERE day = {FIRST_DAY} "
     f"AND reviewer_id = {SECOND_REVIEWER}",),
    # one record
    ("UPDATE scores SET score_value = score_value + 0.5 WHERE session_id = 9 "
     "AND reviewer_id = (SELECT MIN(reviewer_id) FROM scores WHERE session_id = 9) "
     "AND model_id = (SELECT MIN(model_id) FROM scores WHERE session_id = 9)",),
    # a key: a session counted under another reviewer of the same day, the day's sums unchanged
    (f"UPDATE reviewer_day_totals SET sessions = sessions + 1 WHERE day = {FIRST_DAY} "
     f"AND reviewer_id = (SELECT MIN(reviewer_id) FROM reviewer_day_totals)",
     f"UPDATE reviewer_day_totals SET sessions = sessions - 1 WHERE day = {FIRST_DAY} "
     f"AND reviewer_id = {SECOND_REVIEWER}"),
    # a key: a row moved to the next day (none there), its sums unchanged
    ("UPDATE pair_day_totals SET day = day + 1 WHERE day = (SELECT MAX(day) FROM pair_day_totals) "
     "AND reviewer_id = (SELECT MIN(reviewer_id) FROM pair_day_totals) "
     "AND model_id = (SELECT MIN(model_id) FROM pair_day_totals)",),
], ids=["sessions", "float-sum", "extreme", "record", "sessions-key", "row-key"])
def test_the_day_screen_finds_what_comparing_every_row_finds(cli, db, db_url, tmp_path, monkeypatch, edits):
    _simulated(cli, tmp_path)
    by_hand(db_url, *edits)
    compared = _compared(monkeypatch)
    findings, _ = db_check.check(db)
    days = [finding for finding in findings if finding.table in DAY_TABLES]
    assert sum(finding.wrong for finding in days) > 0 and set(compared) & set(DAY_TABLES)
    assert _as_rows(findings) == _as_rows(derived.check(db))  # no screen: every range compared
