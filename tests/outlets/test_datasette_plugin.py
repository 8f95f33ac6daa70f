"""council-db's Datasette plugin in a real Datasette on 127.0.0.1: the bias report of each
council-db database at /<database>/-/bias-report (the CLI's report, window options as query
parameters), linked from the database page; nothing for other databases; and the page as
headless Chromium draws it.

The shared virtualenv has council-db installed from another checkout, so unless the entry
point is installed the plugin is loaded through --plugins-dir; one test checks the entry
point pyproject.toml declares."""

from __future__ import annotations

import html
import importlib
import importlib.metadata
import re
import sqlite3
import subprocess
import tomllib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from council_db.report.render_html import COLOURS
from tests.conftest import browser, run_module
from tests.outlets.test_datasette import datasette
from tests.report.test_html_report import CHROMIUM_FLAGS, region

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "council_db.outlets.datasette_plugin"


def council(*args: str) -> str:
    result = run_module(*args)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


def plugin_options(folder: Path) -> list[str]:
    """--plugins-dir with a file that imports the plugin's hooks, unless Datasette already loads
    the plugin through its installed entry point (then loading it twice would double every hook)."""
    if importlib.metadata.entry_points(group="datasette", name="council_db"):
        return []
    plugins = folder / "plugins"
    plugins.mkdir()
    (plugins / "council_db_plugin.py").write_text(
        f"from {PLUGIN} import (  # noqa: F401\n"
        "    canned_queries, database_actions, handle_exception, prepare_connection, register_facet_classes,\n"
        "    register_routes)\n")
    return ["--plugins-dir", str(plugins)]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Datasette serving, without any metadata file: a council-db database named scores.db
    (60 simulated sessions up to 2025-06-30), one at an older council-db schema, and a SQLite
    file that is not council-db's."""
    folder = tmp_path_factory.mktemp("plugin")
    scores, old, other = folder / "scores.db", folder / "old.db", folder / "other.db"
    council("simulate", "-o", str(folder / "sim.jsonl"), "--sessions", "60", "--days", "20", "--end", "2025-06-30",
            "--reviewer-offset", "openai/gpt-4o=-1.0", "--dimensions", "accuracy,clarity")
    council("--db", str(scores), "import", str(folder / "sim.jsonl"))
    council("--db", str(old), "db", "upgrade", "0007")
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE alembic_version (version_num TEXT)")  # another Alembic app's file
        connection.execute("INSERT INTO alembic_version VALUES ('ae1027a6acf')")
        connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    with datasette(folder, str(scores), str(old), str(other), *plugin_options(folder)) as client:
        yield client, scores


def sql(path: Path, query: str, *params) -> int:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return connection.execute(query, params).fetchone()[0]
    finally:
        connection.close()


def without_generated_time(page: str) -> str:
    """The page less the times that differ between two runs: when it was generated, and the
    report's own time where an asked window ends (or starts) at it."""
    page = re.sub(r"Generated [^<]*?\.(?=</p>)", "Generated (time).", page)
    return re.sub(r"\S+( \((--days \S+ before )?the report(&#x27;|')s time\))", r"(time)\1", page)


def test_the_database_page_links_the_bias_report(served):
    client, _ = served

    page = client.get("/scores")

    assert page.status_code == 200
    assert 'href="/scores/-/bias-report"' in page.text and "Bias report (council-db)" in page.text


def test_the_report_page_is_the_cli_report_of_that_database_with_its_counts(served):
    client, path = served

    page = client.get("/scores/-/bias-report")

    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    sessions = sql(path, "SELECT COUNT(*) FROM sessions")
    records = sql(path, "SELECT COUNT(*) FROM scores WHERE exclusion_id IS NULL")
    assert f"{sessions:,} sessions from " in page.text and f", {records:,} records" in page.text and sessions == 60
    assert "openai/gpt-4o" in page.text and "harsh" in page.text
    cli = council("--db", str(path), "bias-report", "--format", "html")
    assert without_generated_time(page.text) == without_generated_time(cli)


@pytest.mark.parametrize("query, options", [
    ("sessions=25", ["--sessions", "25"]),
    ("since=2025-06-20", ["--since", "2025-06-20"]),
    ("days=7&as_of=2025-06-30T00:00:00Z", ["--days", "7", "--as-of", "2025-06-30T00:00:00Z"]),
    ("reviewer=openai/gpt-4o&reviewer=google/gemini-1.5-pro&since=",
     ["--reviewer", "openai/gpt-4o", "--reviewer", "google/gemini-1.5-pro"]),
    ("sessions=99999999999999999999999", ["--sessions", "99999999999999999999999"]),  # past SQL's integers: all
    ("dimension=clarity&days=7&as_of=2025-06-30T00:00:00Z",
     ["--dimension", "clarity", "--days", "7", "--as-of", "2025-06-30T00:00:00Z"]),
])
def test_query_parameters_choose_the_window_as_the_cli_options_do(served, query, options):
    client, path = served

    page = client.get(f"/scores/-/bias-report?{query}")

    assert page.status_code == 200, page.text
    cli = council("--db", str(path), "bias-report", "--format", "html", *options)
    assert without_generated_time(page.text) == without_generated_time(cli)


def test_a_window_from_the_query_string_has_the_sessions_sqlite_counts(served):
    client, path = served
    since_us = sql(path, "SELECT CAST(strftime('%s', '2025-06-20') AS INTEGER) * 1000000")
    sessions = sql(path, "SELECT COUNT(*) FROM sessions WHERE ts_us >= ?", since_us)
    records = sql(path, "SELECT COUNT(*) FROM scores JOIN sessions AS s ON s.id = scores.session_id "
                        "WHERE s.ts_us >= ?", since_us)

    page = client.get("/scores/-/bias-report", params={"since": "2025-06-20"})

    assert 0 < sessions < 60
    assert f"{sessions:,} sessions from " in page.text and f", {records:,} records" in page.text
    assert f"{25:,} sessions" in client.get("/scores/-/bias-report", params={"sessions": "25"}).text


@pytest.mark.parametrize("query, line", [
    ("days=-1", "days='-1' is not a number of at least 0, e.g. days=30"),
    ("sessions=many", "sessions='many' is not a whole number of at least 1, e.g. sessions=500"),
    ("since=yesterday", "since='yesterday' is not an ISO-8601 time: give e.g. since=2025-12-17"),
    ("since=2025-06-20&until=2025-06-01", "since=2025-06-20 is not before until=2025-06-01"),
    ("day=7", "unknown parameter 'day': the report takes sessions, days, since"),
    ("days=7&days=8", "days is given 2 times: give it once"),
    ("dimension=acuracy", "dimension=acuracy: no record in this window has that dimension; its dimensions: "
                          "accuracy (960 scores), clarity (960 scores)"),
])
def test_a_bad_parameter_gets_a_400_page_with_one_line_saying_what_to_give(served, query, line):
    client, _ = served

    page = client.get(f"/scores/-/bias-report?{query}")

    assert page.status_code == 400
    text = html.unescape(page.text)
    assert line in text and "Traceback" not in text


def test_a_400_writes_no_traceback_to_the_server_log_and_a_500_still_does(served):
    """The report page's own 400s and Datasette's, as HTML and as JSON; then a 500 (Datasette's
    own, for a sort on a column that does not exist), whose traceback shows the log is written."""
    client, path = served
    log = path.parent / "datasette.log"
    start = log.stat().st_size
    bad = ["/scores/-/bias-report?days=abc", "/scores/-/bias-report?day=7", "/scores/scores?_size=abc",
           "/scores/scores.json?_size=abc"]

    pages = [client.get(url) for url in bad]
    after_400s = log.read_bytes()[start:].decode()
    server_error = client.get("/scores/scores?_sort=no_such_column")
    after_500 = log.read_bytes()[start:].decode()

    assert [page.status_code for page in pages] == [400] * len(bad)
    assert after_400s.count(" 400 Bad Request") == len(bad) and "Traceback" not in after_400s
    assert pages[3].json() == {"ok": False, "error": "_size must be a positive integer", "status": 400,
                               "title": None}
    assert "days=&#39;abc&#39; is not a number of at least 0" in pages[0].text and "<!DOCTYPE html>" in pages[0].text
    assert server_error.status_code == 500 and "Traceback" in after_500[len(after_400s):]


def test_a_database_that_is_not_council_dbs_has_no_link_no_report_and_no_canned_queries(served):
    client, _ = served

    assert "bias-report" not in client.get("/other").text
    assert client.get("/other/-/bias-report").status_code == 404
    assert client.get("/missing/-/bias-report").status_code == 404
    assert client.get("/other/reviewer_severity_by_week").status_code == 404


def test_a_database_at_an_older_schema_is_told_to_upgrade_not_read(served):
    client, _ = served

    page = client.get("/old/-/bias-report")

    assert page.status_code == 409
    assert "old has council-db schema 0007" in page.text and "council-db db upgrade" in page.text


def test_the_canned_queries_are_served_for_a_council_db_database_of_any_name(served):
    client, path = served

    rows = client.get("/scores/reviewer_severity_by_week.json",
                      params={"_shape": "array", "reviewer": "openai/gpt-4o", "since": "2025-06-01"}).json()

    assert rows and {row["reviewer"] for row in rows} == {"openai/gpt-4o"}
    assert sum(row["sessions"] for row in rows) == sql(path, "SELECT COUNT(*) FROM sessions")
    assert all(row["difference"] < 0 for row in rows), "planted 1 point harsher"
    assert client.get("/scores/reviewer_disagreements").status_code == 200


def test_the_entry_point_names_the_plugin_module_and_it_has_datasettes_hooks():
    from datasette import hookspecs

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    assert project["entry-points"]["datasette"] == {"council_db": PLUGIN}
    assert "datasette" in project["optional-dependencies"]["datasette"][0]
    module = importlib.import_module(PLUGIN)
    hooks = [name for name in dir(module) if hasattr(getattr(module, name), "datasette_impl")]
    assert sorted(hooks) == ["canned_queries", "database_actions", "handle_exception", "prepare_connection",
                             "register_facet_classes", "register_routes"]
    assert all(hasattr(hookspecs, name) for name in hooks), "every hook is one Datasette defines"


def test_headless_chromium_draws_every_chart_of_the_served_report(served, tmp_path):
    client, _ = served
    shot = tmp_path / "shot.png"

    subprocess.run([browser(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
                    "--window-size=1200,2000", f"{client.base_url}/scores/-/bias-report"],
                   capture_output=True, timeout=180, check=True)

    image = np.asarray(Image.open(shot).convert("RGB"))
    for chart, colour in COLOURS.items():
        count, box = region(image, colour)
        assert count >= 100, f"the {chart} chart ({colour}) is not drawn: {count} pixels"
        assert box[2] - box[0] >= 40, f"the {chart} chart is only {box[2] - box[0]} px wide"
