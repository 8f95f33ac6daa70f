"""The window a report states is the window it used (issue 19). Every report states two spans,
each by one rule: what was asked (the options, counted from --as-of or the report's time:
requested_start, requested_end, requested) and what was found (the first and last session
time in the report: start, end); the JSON, the text, the markdown and the HTML say the same."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from html import escape
from pathlib import Path

import pytest

from tests import realdata
from tests.conftest import Cli, session, write_jsonl

# --as-of also leaves out what was imported after it, so it must come after the tests' imports:
# the next midnight (UTC), with the data ending three weeks before it.
AS_OF = (datetime.now(timezone.utc) + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)


def utc(moment: datetime) -> str:
    """An instant as council-db writes one: ISO-8601 UTC with Z."""
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def stamp(iso: str) -> str:
    return utc(datetime.fromisoformat(iso.replace("Z", "+00:00")))


def session_times(records: list[dict]) -> list[datetime]:
    """Each session's time: its first record's (the session's envelope), in file order."""
    first: dict[str, str] = {}
    for line in records:
        first.setdefault(line["session_id"], line["timestamp"])
    return sorted(datetime.fromisoformat(t.replace("Z", "+00:00")) for t in first.values())


def reports(cli: Cli, *window: str) -> tuple[dict, str, str, str]:
    """The JSON, text, markdown and HTML report of one window."""
    out = []
    for fmt in ("json", "text", "markdown", "html"):
        done = cli("bias-report", "--format", fmt, *window)
        assert done.exit_code == 0, done.output
        out.append(done.stdout)
    return json.loads(out[0])["window"], out[1], out[2], out[3]


def says_both(text: str, asked: str, found: str, html: bool = False) -> None:
    """The page names the asked and the found span, each under its own label (a line the
    80-column text report wraps read as one)."""
    if html:
        asked, found = escape(asked), escape(found)
    text = " ".join(text.split())
    assert f"asked: {asked}" in text.replace("Window asked", "window asked").replace("Asked", "asked")
    assert f"found: {found}" in text.replace("Found", "found")


@pytest.fixture(scope="module")
def ended_three_weeks_ago(tmp_path_factory) -> tuple[Cli, list[dict]]:
    """20 daily sessions at noon, the last three weeks before AS_OF."""
    folder = tmp_path_factory.mktemp("window")
    records = [line for day in range(20)
               for line in session(f"s{day:02}", timestamp=utc(AS_OF - timedelta(days=40 - day, hours=-12)))]
    cli = Cli(folder / "council.db")
    assert cli("import", str(write_jsonl(folder / "in.jsonl", records))).exit_code == 0
    return cli, records


def test_days_before_as_of_states_the_asked_span_from_as_of_and_the_found_span_from_the_data(ended_three_weeks_ago):
    cli, records = ended_three_weeks_ago
    asked_from, asked_to = AS_OF - timedelta(days=30), AS_OF
    inside = [t for t in session_times(records) if asked_from < t <= asked_to]

    window, text, markdown, html = reports(cli, "--days", "30", "--as-of", utc(AS_OF))

    assert (window["requested_start"], window["requested_end"]) == (utc(asked_from), utc(asked_to))
    assert (window["start"], window["end"]) == (utc(inside[0]), utc(inside[-1]))
    assert window["end"] == utc(AS_OF - timedelta(days=20, hours=12))  # three weeks before as-of, not as-of
    asked = f"every session from {utc(asked_from)} (--days 30 before --as-of) to {utc(asked_to)} (--as-of)"
    found = f"{len(inside)} sessions from {utc(inside[0])} to {utc(inside[-1])}"
    assert window["requested"] == asked
    for page, is_html in ((text, False), (markdown, False), (html, True)):
        says_both(page, asked, found, is_html)


def test_since_and_until_are_the_asked_span(ended_three_weeks_ago):
    cli, records = ended_three_weeks_ago
    low, high = AS_OF - timedelta(days=35, hours=-6), AS_OF - timedelta(days=26)
    since = low.astimezone(timezone(timedelta(hours=2))).isoformat()  # another offset: instants, not strings
    until = utc(high)
    inside = [t for t in session_times(records) if low <= t < high]

    window, text, markdown, html = reports(cli, "--since", since, "--until", until)

    assert (window["requested_start"], window["requested_end"]) == (utc(low), utc(high))
    assert (window["start"], window["end"]) == (utc(inside[0]), utc(inside[-1]))
    asked = f"every session from {utc(low)} (--since) to {utc(high)} (--until)"
    assert window["requested"] == asked
    for page, is_html in ((text, False), (markdown, False), (html, True)):
        says_both(page, asked, f"{len(inside)} sessions from {utc(inside[0])} to {utc(inside[-1])}", is_html)


def test_the_latest_sessions_ask_for_no_time_bound_and_say_so(ended_three_weeks_ago):
    cli, records = ended_three_weeks_ago
    latest = session_times(records)[-5:]

    window, text, markdown, html = reports(cli, "--sessions", "5")

    assert (window["requested_start"], window["requested_end"]) == (None, None)
    assert window["requested"] == "the latest 5 sessions, no time bound"
    assert (window["start"], window["end"]) == (utc(latest[0]), utc(latest[-1]))
    for page, is_html in ((text, False), (markdown, False), (html, True)):
        says_both(page, "the latest 5 sessions, no time bound", f"5 sessions from {utc(latest[0])} to "
                  f"{utc(latest[-1])}", is_html)


def test_the_latest_sessions_as_of_a_time_are_bounded_by_it(ended_three_weeks_ago):
    cli, _ = ended_three_weeks_ago
    window = reports(cli, "--sessions", "5", "--as-of", utc(AS_OF))[0]
    assert (window["requested_start"], window["requested_end"]) == (None, utc(AS_OF))
    assert window["requested"] == f"the latest 5 sessions up to {utc(AS_OF)} (--as-of)"
    assert window["end"] == utc(AS_OF - timedelta(days=20, hours=12))


def test_days_without_as_of_count_back_from_the_reports_own_time(ended_three_weeks_ago):
    cli, _ = ended_three_weeks_ago
    before = datetime.now(timezone.utc)
    window = reports(cli, "--days", "3650")[0]
    after = datetime.now(timezone.utc)

    end = datetime.fromisoformat(window["requested_end"].replace("Z", "+00:00"))
    start = datetime.fromisoformat(window["requested_start"].replace("Z", "+00:00"))
    assert before - timedelta(seconds=1) <= end <= after and end - start == timedelta(days=3650)
    assert window["requested"] == (f"every session from {window['requested_start']} (--days 3650 before the "
                                   f"report's time) to {window['requested_end']} (the report's time)")


def test_no_window_options_ask_for_every_session(ended_three_weeks_ago):
    cli, records = ended_three_weeks_ago
    window = reports(cli)[0]
    assert window["requested"] == "every session, no time bound" and window["requested_start"] is None
    assert window["sessions"] == 20


# --- real data ---------------------------------------------------------------------------------

def imported(tmp_path: Path, records: list[dict]) -> Cli:
    cli = Cli(tmp_path / "council.db")
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0
    return cli


FASTCHAT_RUN = "vicuna-13b-20230322-clean-lang"
FASTCHAT_RUN_TIME = "2023-05-04T00:00:00+00:00"  # the tables' commit (their README): they carry no time


def fastchat_at_one_instant(tmp_path: Path) -> list[dict]:
    """The GPT-4 run's records as ``import --from fastchat-review`` stores them (undated: the
    tables carry no time), every one placed at one instant: a run whose sessions tie."""
    tables = Cli(tmp_path / "tables.db")
    assert tables(*realdata.fastchat_import(FASTCHAT_RUN)).exit_code == 0
    exported = tables("export", "--format", "jsonl").stdout.splitlines()
    return [dict(json.loads(line), timestamp=FASTCHAT_RUN_TIME) for line in exported]


def test_fastchat_one_tied_time_is_found_as_one_instant_inside_the_asked_days(tmp_path):
    records = fastchat_at_one_instant(tmp_path)
    run_time = stamp(FASTCHAT_RUN_TIME)
    days = (AS_OF - datetime.fromisoformat(FASTCHAT_RUN_TIME)).days + 10  # back to before the run
    sessions = len({r["session_id"] for r in records})

    window, text, markdown, html = reports(imported(tmp_path, records), "--days", str(days), "--as-of", utc(AS_OF))

    assert window["sessions"] == sessions and window["start"] == window["end"] == run_time
    asked_from = AS_OF - timedelta(days=days)
    assert (window["requested_start"], window["requested_end"]) == (utc(asked_from), utc(AS_OF))
    asked = f"every session from {utc(asked_from)} (--days {days} before --as-of) to {utc(AS_OF)} (--as-of)"
    for page, is_html in ((text, False), (markdown, False), (html, True)):
        says_both(page, asked, f"{sessions} sessions, all at {run_time}", is_html)


def test_mt_bench_latest_sessions_are_found_where_the_published_times_put_them(tmp_path):
    """A session (question, turn) is at its first grading's time: the file is in time order."""
    first: dict[tuple, float] = {}
    for j in realdata.mt_bench_judgments():
        first.setdefault((j["question_id"], j["turn"]), j["tstamp"])
    latest = sorted(datetime.fromtimestamp(t, timezone.utc) for t in first.values())[-40:]
    cli = Cli(tmp_path / "council.db")
    assert cli(*realdata.mt_bench_import()).exit_code == 0

    window, text, _, _ = reports(cli, "--sessions", "40")

    assert window["requested"] == "the latest 40 sessions, no time bound"
    assert (window["start"], window["end"]) == (utc(latest[0]), utc(latest[-1]))
    says_both(text, "the latest 40 sessions, no time bound", f"40 sessions from {utc(latest[0])} to {utc(latest[-1])}")


# --- the other commands that state a window, and the Python API --------------------------------

def test_the_leaderboard_states_the_same_two_spans(ended_three_weeks_ago):
    cli, _ = ended_three_weeks_ago
    window = ["--days", "30", "--as-of", utc(AS_OF)]
    report = reports(cli, *window)[0]

    ranked = json.loads(cli("leaderboard", "--format", "json", *window).stdout)["window"]
    table = " ".join(cli("leaderboard", "--wide", *window).stdout.split())  # --wide: whole times; the title wraps

    for key in ("start", "end", "requested_start", "requested_end", "requested"):
        assert ranked[key] == report[key], key
    assert f"asked: {report['requested']}" in table and f"found: {report['start']} to {report['end']}" in table


def test_the_python_api_states_the_asked_span(ended_three_weeks_ago):
    import council_db

    cli, _ = ended_three_weeks_ago
    with council_db.connect(cli.db) as db:
        window = db.report(days=30, as_of=utc(AS_OF)).window
    assert (window.requested_start, window.requested_end) == (utc(AS_OF - timedelta(days=30)), utc(AS_OF))
    assert window.requested == reports(cli, "--days", "30", "--as-of", utc(AS_OF))[0]["requested"]
