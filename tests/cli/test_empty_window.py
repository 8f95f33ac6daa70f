"""A window that holds nothing while the database holds sessions says where they are and
which option reaches them, instead of a report on nothing."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from typer.testing import CliRunner

from council_db.cli.app import app
from council_db.errors import CouncilDbError
from tests.conftest import session, write_jsonl

TODAY = datetime.now(timezone.utc).replace(hour=12, minute=0, second=0, microsecond=0)
NEWEST, OLDEST = TODAY - timedelta(days=45), TODAY - timedelta(days=75)


def day(moment: datetime) -> str:
    return moment.date().isoformat()


@pytest.fixture
def filled(tmp_path):
    db_path = tmp_path / "council.db"
    lines = session("older", timestamp=OLDEST.isoformat()) + session("newest", timestamp=NEWEST.isoformat())
    result = CliRunner().invoke(app, ["--db", str(db_path), "import", str(write_jsonl(tmp_path / "in.jsonl", lines))])
    assert result.exit_code == 0, result.output
    return db_path


def run(db, *args):
    return CliRunner().invoke(app, ["--db", str(db), *args])


def test_a_bias_report_over_an_empty_window_says_where_the_newest_session_is(filled):
    result = run(filled, "bias-report", "--days", "30", "--json")

    assert result.exit_code == 0, result.output
    warning = json.loads(result.stdout)["warnings"][0]
    assert "2 sessions" in warning and f"newest {day(NEWEST)}" in warning and "try --days 60" in warning
    assert "try --days 60" in result.stderr


@pytest.mark.parametrize("window, hint", [
    (["--since", day(TODAY)], f"try --since {day(NEWEST)}"),
    (["--until", day(OLDEST - timedelta(days=9))], f"try --until {day(OLDEST + timedelta(days=1))}"),
    (["--as-of", day(OLDEST - timedelta(days=9))], f"try --as-of {day(NEWEST)}"),
    (["--reviewer", "nobody/none"], "--reviewer"),
])
def test_each_window_option_gets_its_own_hint(filled, window, hint):
    result = run(filled, "anomalies", *window)

    assert isinstance(result.exception, CouncilDbError), result.output
    assert hint in str(result.exception) and "2 sessions" in str(result.exception)


def test_the_leaderboard_says_it_too(filled):
    result = run(filled, "leaderboard", "--days", "30")

    assert isinstance(result.exception, CouncilDbError), result.output
    assert "try --days 60" in str(result.exception)
