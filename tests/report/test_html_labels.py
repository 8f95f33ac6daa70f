"""What the HTML report's header and time axis say: the window's filters as the options
that ask for them (not a Python dict), and a time axis under three days labelled with times,
the date once, where each tick used to repeat one date."""

from __future__ import annotations

from council_db.report.render_html import options
from council_db.report.svg import time_labels
from tests.conftest import Cli, session, write_jsonl

START = 1_711_370_016_000_000  # 2024-03-25T12:33:36Z
MINUTE, DAY = 60_000_000, 86_400_000_000


def test_filters_read_as_the_options_that_ask_for_them():
    filters = {"days": 30.0, "reviewer": ["openai/gpt-4o", "x/y"], "sessions": 1200, "exclude_anomalies": 3}

    assert options(filters) == ("--days 30 --reviewer openai/gpt-4o --reviewer x/y --sessions 1200 "
                                "--exclude-anomalies (3 left out)")


def test_the_html_header_shows_no_python_dict(tmp_path):
    cli = Cli(tmp_path / "council.db")
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", session())))

    page = cli("bias-report", "--format", "html", "--days", "30", "--as-of", "2025-12-18").stdout

    header = page.split('<p class="window">', 1)[1].split("</p>", 1)[0]
    assert "options --days 30" in header and "{" not in header


def test_a_23_minute_axis_shows_times_with_the_date_once():
    assert time_labels(START, START + 23 * MINUTE) == ["2024-03-25 12:33", "12:45", "12:56"]


def test_an_axis_across_midnight_dates_every_tick():
    assert time_labels(START, START + DAY) == ["2024-03-25 12:33", "2024-03-26 00:33", "2024-03-26 12:33"]


def test_a_two_minute_axis_shows_seconds():
    assert time_labels(START, START + 2 * MINUTE) == ["2024-03-25 12:33:36", "12:34:36", "12:35:36"]


def test_a_long_axis_shows_dates():
    assert time_labels(START, START + 90 * DAY) == ["2024-03-25", "2024-05-09", "2024-06-23"]
