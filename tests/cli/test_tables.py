"""Tables for people: data printed as it is (never read as rich markup), 80 columns wide
with session ids shortened as git shortens hashes, any unique prefix taken back, --wide for
everything."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from council_db.cli.app import app
from tests.conftest import record, run_module, session, write_jsonl

NEAR_TWINS = ["3f2b6c1e-6d1a-4c3e-9a51-0c7f0d2b9e10", "3f2b6c1e-6d00-4c3e-9a51-000000000000",
              "77aa0000-0000-4000-8000-000000000001"]


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env=env)


@pytest.fixture
def filled(tmp_path):
    db_path = tmp_path / "council.db"
    lines = [line for key in NEAR_TWINS for line in session(key)]
    lines.append(record(session_id="[bold]x[/bold]", reviewer_id=7))  # rejected, its known values kept
    lines.append(record(session_id="kept", model_id="[redacted]", score_value="high"))
    result = run("--db", str(db_path), "import", str(write_jsonl(tmp_path / "in.jsonl", lines)))
    assert result.exit_code == 3, result.output  # two lines rejected
    return db_path


def test_a_stored_value_in_brackets_is_printed_as_it_is(filled):
    result = run("--db", str(filled), "rejected", "--wide")

    assert result.exit_code == 0, result.output
    assert "[redacted]" in result.stdout and "[bold]x[/bold]" in result.stdout


def test_a_query_selecting_rich_markup_prints_the_text_not_a_link(filled):
    result = run("--db", str(filled), "sql", "SELECT '[link=http://x]click[/link]' AS shown, '[redacted]' AS r",
                 env={"COLUMNS": "80"})

    assert result.exit_code == 0, result.output
    assert "[link=http://x]click[/link]" in result.stdout and "[redacted]" in result.stdout
    assert "\x1b]8;" not in result.stdout  # no terminal hyperlink


def test_session_ids_are_shortened_to_their_unique_prefix_and_rows_fit_80_columns(filled):
    result = run("--db", str(filled), "sessions", env={"COLUMNS": "80"})

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), result.stdout
    body = [line for line in lines if "│" in line]
    assert len(body) == 3  # one line per session: nothing folded
    # the twins share 11 characters, so every id shows 12 (git's rule: one length, at least 8)
    shown = {line.split("│")[0].strip() for line in body}
    assert shown == {key[:12] for key in NEAR_TWINS}


def test_wide_shows_whole_ids_and_every_column(filled):
    result = run("--db", str(filled), "sessions", "--wide")

    assert result.exit_code == 0, result.output
    assert all(key in result.stdout for key in NEAR_TWINS)
    assert "council_config_version" in result.stdout


def test_json_keeps_whole_ids(filled):
    result = run("--db", str(filled), "sessions", "--json")

    assert {row["session_id"] for row in json.loads(result.stdout)} == set(NEAR_TWINS)


def test_audit_takes_any_unique_prefix(filled):
    result = run("--db", str(filled), "audit", "77aa", "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["session_id"] == NEAR_TWINS[2]


def test_an_ambiguous_prefix_is_refused_listing_the_candidates(filled):
    result = run_module("--db", str(filled), "audit", "3f2b6c1e")

    text = result.stderr.decode()
    assert result.returncode == 1 and text.count("\n") == 1
    assert NEAR_TWINS[0] in text and NEAR_TWINS[1] in text and "give more" in text


def test_a_prefix_of_no_session_says_so(filled):
    result = run_module("--db", str(filled), "audit", "ffff")

    assert result.returncode == 1 and "unknown session 'ffff'" in result.stderr.decode()


@pytest.fixture
def simulated_db(tmp_path):
    db_path = tmp_path / "sim.db"
    data = tmp_path / "sim.jsonl"
    assert run("simulate", "-o", str(data), "--sessions", "40", "--seed", "3").exit_code == 0
    assert run("--db", str(db_path), "import", str(data)).exit_code == 0
    return db_path


@pytest.mark.parametrize("command", [["leaderboard"], ["trends"], ["anomalies", "--all"], ["sessions"],
                                     ["scores", "--session", "{first}"]])
def test_each_listing_puts_a_row_on_one_line_at_80_columns(simulated_db, command):
    """With llm-council's usual model ids (up to 27 characters), no cell is folded onto a
    second line, except the free text of an anomaly's reason."""
    first = json.loads(run("--db", str(simulated_db), "sessions", "--json").stdout)[0]["session_id"]

    result = run("--db", str(simulated_db), *[arg.format(first=first) for arg in command], env={"COLUMNS": "80"})

    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "│" in line]
    assert rows and all(len(line) <= 80 for line in result.stdout.splitlines())
    folded = [line for line in rows if not line.split("│")[0].strip()]
    assert not folded or command[0] == "anomalies", result.stdout


def test_sql_at_80_columns_shows_the_columns_that_fit_one_line_a_row_and_says_what_it_left_out(simulated_db):
    result = run("--db", str(simulated_db), "sql", "SELECT * FROM score_records LIMIT 3", env={"COLUMNS": "80"})

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines) and len([line for line in lines if "│" in line]) == 3
    columns = len(json.loads(run("--db", str(simulated_db), "sql", "SELECT * FROM score_records LIMIT 1",
                                 "--nl").stdout))  # the view's columns, however many a revision gives it
    assert f"2 of {columns} columns shown" in result.stderr and "--wide" in result.stderr


def test_sql_wide_shows_every_column_whole(simulated_db):
    result = run("--db", str(simulated_db), "sql", "SELECT * FROM score_records LIMIT 3", "--wide",
                 env={"COLUMNS": "600"})

    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0]
    assert "excluded_because" in header and "length_bucket" in header and not result.stderr


def test_counts_in_tables_have_thousands_separators_and_ids_and_times_keep_their_digits(simulated_db):
    result = run("--db", str(simulated_db), "sql", "SELECT 12345 AS records, 12345 AS import_id, "
                 "1788070492779196 AS ts_us", "--wide")

    row = result.stdout.splitlines()[-1].split("│")
    assert [cell.strip() for cell in row] == ["12,345", "12345", "1788070492779196"]
    assert "12345" in run("--db", str(simulated_db), "sql", "SELECT 12345 AS records", "--csv").stdout
