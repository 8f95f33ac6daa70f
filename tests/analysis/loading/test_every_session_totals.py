"""A window of every session sums ``session_stats`` alone, without looking up each session:
the same numbers as the sums over the window's sessions, bit for bit, its span included."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from sqlalchemy import text

from council_db.analysis.loading.window import Window, load_for_report
from council_db.analysis.loading.window_totals import WindowTotals, load_totals, sums_sql
from council_db.contract.timestamps import MAX_US, format_us
from council_db.simulate import SimulationConfig, write_jsonl
from tests.conftest import both_backends, session
from tests.conftest import write_jsonl as write_lines

TAU2 = (0.0, 0.04, 0.5)  # the random-effects pass at a few between-session variances


def _import(cli, tmp_path) -> None:
    """60 simulated sessions (unscored records, planted verbosity), two undated sessions and
    three on another scale, the newest of the store: every edge of the span and the scales."""
    path = tmp_path / "in.jsonl"
    with path.open("w") as out:
        write_jsonl(SimulationConfig(sessions=60, seed=3, days=40, verbosity=0.3, unscored_rate=0.03), out)
    undated = [line for n in range(2) for line in session(f"undated-{n}", timestamp="")]
    other = [dict(line, score_scale="1-5", score_value=float(1 + n % 5), timestamp=f"2030-01-0{n // 8 + 1}T00:00:00Z")
             for n, line in enumerate(line for k in range(3) for line in session(f"other-{k}", models=4, reviewers=2))]
    for name, lines in (("in", None), ("undated", undated), ("other", other)):
        source = path if lines is None else write_lines(tmp_path / f"{name}.jsonl", lines)
        assert cli("import", str(source)).exit_code == 0


def _figures(totals: WindowTotals) -> dict:
    """Every figure of the totals, the random-effects pass's included."""
    figures = {name: value for name, value in asdict(totals).items() if name != "random_sums"}
    return {**figures, "random_sums": [totals.random_sums(tau2) for tau2 in TAU2]}


@both_backends
def test_the_sums_of_every_session_are_those_summed_over_the_window_sessions(cli, db, tmp_path):
    _import(cli, tmp_path)
    window = Window()
    direct, joined = (load_totals(db, *window.session_query("s.id, s.ts_us"), every_session=every)
                      for every in (True, False))

    assert _figures(direct) == _figures(joined)
    assert (direct.sessions, direct.undated, direct.excluded["other_scale:1-5"]) == (62, 2, 24)
    assert direct.start_us < direct.end_us < 1_893_456_000_000_000  # the other scale's 2030 sessions are not its span


@both_backends
def test_a_store_with_a_session_of_unreadable_time_leaves_it_out_of_the_sums(cli, db, tmp_path):
    """Such a session is in no window: the sums then go through the window's sessions."""
    _import(cli, tmp_path)
    with db.engine.begin() as connection:
        connection.execute(text(f"UPDATE sessions SET ts_us = {MAX_US + 1} WHERE session_key = 'undated-0'"))

    loaded = load_for_report(db, Window(), sample_sessions=10)

    assert (loaded.totals.sessions, loaded.totals.undated) == (61, 1)
    assert loaded.totals.excluded["unreadable_timestamp"] == 16
    joined = load_totals(db, *Window().session_query("s.id, s.ts_us"))
    assert _figures(loaded.totals) == {**_figures(joined), "excluded": loaded.totals.excluded}


@pytest.mark.parametrize("every_session", [True, False])
def test_the_sums_of_every_session_read_no_session_row(cli, db, tmp_path, every_session):
    """SQLite's plan: one pass over session_stats, not a lookup of each session beside it."""
    _import(cli, tmp_path)
    query = sums_sql(Window().session_query("s.id, s.ts_us")[0], correlations=True, every_session=every_session)
    with db.reading() as reader:
        plan = [str(row[-1]) for row in reader.rows(
            f"EXPLAIN QUERY PLAN {query}", {"scale_id": 1, "first_id": 1, "last_id": 100})]
    assert any(step.startswith(("SCAN s ", "SEARCH s ")) for step in plan) != every_session, plan


@both_backends
def test_after_deleting_an_import_and_pruning_the_sums_of_every_session_are_still_the_window_sums(cli, db, tmp_path):
    """The sums without the sessions count every session_stats row: deleting sessions (an
    import's, or those before a time) must leave none behind for a session that is gone."""
    _import(cli, tmp_path)
    assert cli("delete", "--import", "3", "--yes").exit_code == 0  # the other scale's sessions
    window = Window()
    first = load_totals(db, *window.session_query("s.id, s.ts_us"), every_session=True).start_us
    assert cli("prune", "--before", format_us(first + 10 * 86_400_000_000), "--yes").exit_code == 0
    direct, joined = (load_totals(db, *window.session_query("s.id, s.ts_us"), every_session=every)
                      for every in (True, False))

    assert _figures(direct) == _figures(joined)
    assert "other_scale:1-5" not in direct.excluded and 30 < direct.sessions < 60 and direct.start_us > first
