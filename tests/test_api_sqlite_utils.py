"""council_db.connect(...).sqlite_utils(): the database for notebook users as sqlite-utils
sees it, read-only, on a real file (and refused, in one line, for PostgreSQL)."""

from __future__ import annotations

import sqlite3

import pytest

import council_db
from council_db.errors import CouncilDbError


@pytest.fixture
def council(tmp_path):
    db = council_db.connect(str(tmp_path / "council.db"))
    db.record_session("s-1", [{"model": "a/one", "response": "x" * 10}, {"model": "b/two", "response": "y" * 30}],
                      [{"model": "a/one", "parsed_ranking": {"ranking": ["Response B", "Response A"],
                                                            "scores": {"Response A": 6, "Response B": 8}}}],
                      {"Response A": "a/one", "Response B": "b/two"})
    yield db
    db.close()


def test_notebooks_query_tables_and_views_as_dicts(council):
    browse = council.sqlite_utils()

    assert {"scores", "sessions"} <= set(browse.table_names())
    assert "reviewer_profiles" in browse.view_names()
    rows = list(browse.query("SELECT model, score_value FROM score_records ORDER BY model"))
    assert rows == [{"model": "a/one", "score_value": 6.0}, {"model": "b/two", "score_value": 8.0}]
    assert browse["scores"].count == 2


def test_it_cannot_change_the_records(council):
    browse = council.sqlite_utils()

    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        browse["scores"].delete_where()
    assert council.sqlite_utils()["scores"].count == 2


def test_a_postgresql_database_is_refused_in_one_line():
    from council_db.api import Council
    from council_db.store.database import Database

    server = Council(Database("postgresql+psycopg://alice@db.example.internal/council"))
    with pytest.raises(CouncilDbError, match="sqlite_utils\\(\\) reads a SQLite file, and postgresql\\+psycopg"):
        server.sqlite_utils()
