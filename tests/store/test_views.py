"""The series and profile views (migration 0005) give the numbers their definitions promise."""

from __future__ import annotations

import sqlite3

import pytest

from tests.conftest import session, write_jsonl


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
