"""The views give the numbers their definitions promise: the series and profile views, the
mean of score_value, and every view as revision 0009 gave it (before the day totals)."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from decimal import Decimal

import pytest
from sqlalchemy import text

from council_db.store import migrate
from council_db.store.database import create_engine_for
from tests.conftest import both_backends, same_numbers, session, write_jsonl
from tests.outlets.test_export_identical import varied_lines
from tests.realdata import fastchat_import, mt_bench_import


@pytest.fixture
def two_days(cli, tmp_path, db_path):
    """Three 4x4 sessions: two on 2025-12-10, one on 2025-12-11; reviewer r gives candidate m 5 + (m + r) % 5."""
    lines = (session("a", timestamp="2025-12-10T09:00:00Z") + session("b", timestamp="2025-12-10T23:59:59Z")
             + session("c", timestamp="2025-12-11T00:00:00Z"))
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    connection = sqlite3.connect(db_path)
    connection.row_factory = sqlite3.Row
    yield connection
    connection.close()


def rows(connection: sqlite3.Connection, sql: str) -> list[dict]:
    return [dict(row) for row in connection.execute(sql)]


def test_reviewer_daily_has_one_row_per_utc_day_and_reviewer(two_days):
    found = rows(two_days, "SELECT day, reviewer, records, sessions, mean_score, min_score, max_score, self_reviews "
                           "FROM reviewer_daily WHERE reviewer = 'vendor/model-1' ORDER BY day")

    # reviewer 1 gives 6, 7, 8, 9 in every session, and reviews itself once per session.
    assert found == [
        {"day": "2025-12-10", "reviewer": "vendor/model-1", "records": 8, "sessions": 2, "mean_score": 7.5,
         "min_score": 6.0, "max_score": 9.0, "self_reviews": 2},
        {"day": "2025-12-11", "reviewer": "vendor/model-1", "records": 4, "sessions": 1, "mean_score": 7.5,
         "min_score": 6.0, "max_score": 9.0, "self_reviews": 1},
    ]
    assert two_days.execute("SELECT COUNT(*) FROM reviewer_daily").fetchone()[0] == 8


def test_daily_scores_count_sessions_and_records_per_day(two_days):
    found = rows(two_days, "SELECT day, sessions, records, reviewers, candidates, mean_length_chars AS length "
                           "FROM daily_scores ORDER BY day")

    assert found == [
        {"day": "2025-12-10", "sessions": 2, "records": 32, "reviewers": 4, "candidates": 4, "length": 950.0},
        {"day": "2025-12-11", "sessions": 1, "records": 16, "reviewers": 4, "candidates": 4, "length": 950.0},
    ]


def test_model_profiles_separate_self_scores_from_scores_by_others(two_days):
    found = rows(two_days, "SELECT model, records, sessions, reviewers, raw_mean, mean_self_score, "
                           "mean_score_from_others FROM model_profiles WHERE model = 'vendor/model-0'")

    # candidate 0 gets 5, 6, 7, 8 from reviewers 0-3; its own score is 5.
    assert found == [{"model": "vendor/model-0", "records": 12, "sessions": 3, "reviewers": 4, "raw_mean": 6.5,
                      "mean_self_score": 5.0, "mean_score_from_others": 7.0}]


# The demo of scripts/demo.sh: 300 sessions with planted biases and 1% unscored (0.0) records.
DEMO = ("--sessions", "300", "--seed", "7", "--reviewer-offset", "openai/gpt-4o=-0.8,anthropic/claude-3-5-sonnet=0.6",
        "--position-effect", "0.4,0,0,-0.2", "--self-preference", "0.5", "--verbosity", "0.3", "--unscored", "0.01")


def demo_lines(cli, tmp_path) -> list[dict]:
    """The demo's records, imported into the test's database."""
    path = tmp_path / "demo.jsonl"
    assert cli("simulate", "-o", str(path), *DEMO).exit_code == 0
    assert cli("import", "-q", str(path)).exit_code == 0
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_mean_score_value_per_reviewer_in_score_records_leaves_out_excluded_scores(cli, tmp_path, db_path):
    lines = demo_lines(cli, tmp_path)
    usable, unscored = defaultdict(list), [line for line in lines if line["score_value"] == 0.0]
    for line in lines:
        if 1.0 <= line["score_value"] <= 10.0:
            usable[line["reviewer_id"]].append(line["score_value"])
    connection = sqlite3.connect(db_path)
    found = dict(connection.execute("SELECT reviewer, AVG(score_value) FROM score_records GROUP BY reviewer"))

    assert len(unscored) > 20
    assert found == pytest.approx({reviewer: sum(scores) / len(scores) for reviewer, scores in usable.items()})
    excluded = connection.execute("SELECT score_value, stored_score_value, excluded_because FROM score_records "
                                  "WHERE excluded_because IS NOT NULL").fetchall()
    assert excluded == [(None, 0.0, "unscored")] * len(unscored)  # the stored value is still there
    connection.close()


VIEWS = ("score_records", "within_session_scores", "session_summaries", "slot_means", "reviewer_profiles",
         "model_profiles", "reviewer_daily", "daily_scores")


def all_views(url: str) -> dict[str, list[dict]]:
    """Every row of every view, in one order whatever the database returned."""
    engine = create_engine_for(url)
    try:
        with engine.connect() as connection:
            return {view: sorted(([{name: float(value) if isinstance(value, Decimal) else value
                                    for name, value in row._mapping.items()}
                                   for row in connection.execute(text(f"SELECT * FROM {view}"))]), key=_order)
                    for view in VIEWS}
    finally:
        engine.dispose()


def _order(row: dict) -> tuple:
    """Floats rounded, so that two sums of the same numbers in another order sort alike."""
    return tuple((value is None, round(value, 6) if isinstance(value, float) else value) for value in row.values())


STYLE = ("response_tokens", "markdown_headers", "markdown_lists", "markdown_bold")


def without_kinds(views: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """The views without revision 0012's reviewer_kind (every reviewer of these stores is a judge)
    and 0015's style columns (no answer of these stores has a style)."""
    assert {row["reviewer_kind"] for rows in views.values() for row in rows if "reviewer_kind" in row} == {"judge"}
    assert {row[name] for rows in views.values() for row in rows for name in STYLE if name in row} == {None}
    later = ("reviewer_kind", *STYLE)
    return {view: sorted(({name: value for name, value in row.items() if name not in later} for row in rows),
                         key=_order) for view, rows in views.items()}


def as_revision_0010_shows_them(views: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """Revision 0009's score_records showed an excluded score's stored value as its score_value;
    0010's has it as stored_score_value (after excluded_because), its score_value NULL."""
    rows = []
    for row in views["score_records"]:
        shown = {}
        for name, value in row.items():
            shown[name] = None if name == "score_value" and row["excluded_because"] is not None else value
            if name == "excluded_because":
                shown["stored_score_value"] = row["score_value"]
        rows.append(shown)
    return {**views, "score_records": sorted(rows, key=_order)}


@both_backends
@pytest.mark.parametrize("data", ["demo", "public judge data", "varied"])
def test_every_view_gives_the_rows_revision_0009s_views_gave(db_url, cli, tmp_path, data):
    """0009's views grouped every record on each query: the definitions. 0010's read the day
    totals and per-session subqueries; downgraded to 0009, the same store gives the same rows."""
    if data == "demo":
        demo_lines(cli, tmp_path)
    elif data == "varied":
        assert cli("import", "-q", str(write_jsonl(tmp_path / "in.jsonl", varied_lines()))).exit_code in (0, 3)
    else:  # MT-bench (unknown lengths among them) and a FastChat review run (undated)
        for arguments in (mt_bench_import(), fastchat_import("gpt-3.5-turbo_review_vicuna-13b-20230322-new-hp-fp16")):
            assert cli(*arguments, "-q").exit_code in (0, 3)
    at_head = without_kinds(all_views(db_url))
    engine = create_engine_for(db_url)
    migrate.downgrade(engine, "0009")
    engine.dispose()
    before = as_revision_0010_shows_them(all_views(db_url))

    for view in VIEWS:
        assert at_head[view], view
        assert [list(row) for row in at_head[view]] == [list(row) for row in before[view]], view
        assert same_numbers(at_head[view], before[view], view)


@pytest.mark.parametrize("view", ["score_records", "within_session_scores"])
@pytest.mark.parametrize("revision", ["0010", "head"])
def test_a_filter_on_session_id_reads_that_session_by_its_key_not_every_record(tmp_path, view, revision):
    """Revision 0011: a session's records (Datasette's link from a session, or WHERE session_id
    = '...') read the session through its unique key and its records through the scores' primary
    key; 0010 scanned every record (4 s at a million sessions)."""
    path = tmp_path / "council.db"
    migrate.upgrade(create_engine_for(f"sqlite:///{path}"), revision)
    with sqlite3.connect(path) as connection:
        plan = [row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN SELECT * FROM {view} WHERE session_id = 'k'")]

    scans = [step for step in plan if step.startswith("SCAN")]
    if revision == "0010":
        assert scans == ["SCAN sc"], "the plan the test reads shows the scan it is there to rule out"
    else:
        assert scans == [] and "SEARCH s USING INDEX sqlite_autoindex_sessions_1 (session_key=?)" in plan


REVIEWER_VIEWS = ("score_records", "within_session_scores", "reviewer_profiles", "reviewer_daily")


@both_backends
def test_the_views_that_name_a_reviewer_give_its_kind_beside_it(db_url, cli, tmp_path):
    """Revision 0012: a human rater and a gold label read as such wherever a reviewer is named."""
    lines = [{**line, "reviewer_kind": kind} for kind, reviewer in (("human", 1), ("gold", 2))
             for line in session("a", timestamp="2025-12-10T09:00:00Z")
             if line["reviewer_id"] == f"vendor/model-{reviewer}"]
    lines += session("a", timestamp="2025-12-10T09:00:00Z")
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0

    views = all_views(db_url)
    for view in REVIEWER_VIEWS:
        found = {(row["reviewer"], row["reviewer_kind"]) for row in views[view]}
        assert found == {("vendor/model-0", "judge"), ("vendor/model-1", "human"), ("vendor/model-2", "gold"),
                         ("vendor/model-3", "judge")}, view
        assert list(views[view][0]).index("reviewer_kind") == list(views[view][0]).index("reviewer") + 1, view
