"""council-db db check runs its checks two at a time, and finds what it found one at a time."""

from __future__ import annotations

import threading
import time

from council_db.store import db_check, derived, references
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
    by_hand(db_url, "DELETE FROM session_stats WHERE session_id = 1",
            "UPDATE scores SET score_value = 1.0 WHERE session_id = 4",
            "UPDATE scores SET envelope_id = 999999 WHERE session_id = 7")  # no such envelope
    findings, orphans = db_check.check(db)
    assert _as_rows(findings) == _as_rows(derived.check(db))
    assert _as_rows(orphans) == _as_rows(references.orphans(db))
    assert sum(finding.wrong for finding in findings) > 0 and sum(finding.extra for finding in orphans) > 0


def test_checks_that_only_read_overlap_in_time(cli, db, tmp_path, monkeypatch):
    """Each check made to last 0.2 s: one after the other they could not overlap."""
    _simulated(cli, tmp_path)
    spans, check_table = [], derived._check_table

    def slow(database, table, repair):
        start = time.perf_counter()
        time.sleep(0.2)
        found = check_table(database, table, repair)
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
