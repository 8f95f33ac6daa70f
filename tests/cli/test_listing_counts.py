"""How many rows a listing gives, and saying so: printed, the latest 20 sessions (100
rejected lines) with "20 of 25 shown"; a file written with -o holds every row unless told
otherwise, and the command says what it wrote ("wrote FILE (format, n)"); `sessions` takes
--sessions N as the reports do. `db check` says its outcome once, not a line per table beside
the table."""

from __future__ import annotations

import csv
import json
import re

import pytest

from council_db.store import migrate
from tests.conftest import Cli, run_module, session, write_jsonl

SESSIONS, BAD_LINES = 25, 105


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """25 sessions and 105 rejected lines."""
    folder = tmp_path_factory.mktemp("counts")
    lines = [line for n in range(SESSIONS) for line in session(f"s-{n:02d}", timestamp=f"2025-12-{n + 1:02d}T10:00:00Z")]
    cli = Cli(folder / "council.db")
    assert cli("import", str(write_jsonl(folder / "in.jsonl", lines + ["{not json"] * BAD_LINES))).exit_code == 3
    return cli, folder


def test_printed_sessions_are_the_latest_20_and_it_says_of_how_many(store):
    cli, _ = store

    result = cli("sessions", "--json")

    assert [row["session_id"] for row in json.loads(result.stdout)] == [f"s-{n:02d}" for n in range(24, 4, -1)]
    assert "20 of 25 sessions shown" in result.stderr


def test_a_file_written_with_o_holds_every_session_and_says_so(store):
    cli, folder = store

    result = cli("sessions", "-o", str(folder / "sessions.csv"))

    assert result.exit_code == 0, result.output
    assert len(list(csv.DictReader((folder / "sessions.csv").open()))) == SESSIONS
    assert result.stderr == f"wrote {folder / 'sessions.csv'} (csv, 25 sessions)\n"


def test_sessions_takes_sessions_n_as_the_reports_do(store):
    cli, folder = store

    printed = json.loads(cli("sessions", "--sessions", "3", "--json").stdout)
    assert cli("sessions", "--sessions", "3", "-o", str(folder / "three.json")).exit_code == 0

    assert [row["session_id"] for row in printed] == ["s-24", "s-23", "s-22"]
    assert len(json.loads((folder / "three.json").read_text())) == 3


def test_rejected_lines_printed_are_100_and_a_file_holds_all_of_them(store):
    cli, folder = store

    printed = cli("rejected", "--json")
    written = cli("rejected", "-o", str(folder / "rejected.jsonl"))

    assert len(json.loads(printed.stdout)) == 100 and "100 of 105 rejected lines shown" in printed.stderr
    assert len((folder / "rejected.jsonl").read_text().splitlines()) == BAD_LINES
    assert written.stderr == f"wrote {folder / 'rejected.jsonl'} (jsonl, 105 lines)\n"


@pytest.mark.parametrize("command, said", [
    (["bias-report", "-o", "{folder}/report.md"], "(markdown, 25 sessions)"),
    (["bias-report", "--wide", "-o", "{folder}/report.txt"], "(text, 25 sessions)"),
    (["stats", "-o", "{folder}/stats.json"], "(json)"),
    (["sql", "SELECT 1 AS one UNION ALL SELECT 2", "-o", "{folder}/two.csv"], "(csv, 2 rows)"),
    (["anomalies", "--all", "-o", "{folder}/anomalies.jsonl"], "(jsonl, 25 sessions)"),
    (["db", "history", "-o", "{folder}/history.csv"], f"(csv, {len(migrate.history())} revisions)"),
])
def test_a_report_or_listing_written_to_a_file_says_wrote_file_format_and_count(store, command, said):
    cli, folder = store
    line = [arg.format(folder=folder) for arg in command]

    result = cli(*line)

    assert result.exit_code == 0, result.output
    assert f"wrote {line[-1]} {said}\n" in result.stderr


def test_printed_output_says_nothing_of_files(store):
    cli, _ = store

    assert "wrote" not in cli("stats").stderr


def test_db_check_says_its_outcome_once(store):
    cli, _ = store

    result = run_module("--db", cli.db, "db", "check")

    assert result.returncode == 0
    assert re.fullmatch(r"checked all \d+ ranges \(no clean check recorded yet\)\n"  # what it read, then the outcome
                        r"\d+ checks: every row true to the records\n", result.stderr.decode())
    assert "session_stats" in result.stdout.decode()


def test_counts_in_messages_have_thousands_separators(tmp_path):
    result = run_module("simulate", "-o", str(tmp_path / "sim.jsonl"), "--sessions", "100")

    assert result.stderr.decode() == f"wrote 1,600 records (100 sessions) to {tmp_path / 'sim.jsonl'}\n"
