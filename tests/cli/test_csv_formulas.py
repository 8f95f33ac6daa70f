"""CSV is written for spreadsheets: a stored id that a spreadsheet would run as a formula
(=, +, -, @, a tab or a carriage return first) gets a leading single quote, as OWASP advises,
in the CSV export and in every listing's CSV; numbers keep their sign, and JSON keeps the
value as it is."""

from __future__ import annotations

import csv
import io
import json

import pytest

from council_db.spreadsheet_text import spreadsheet_text
from tests.conftest import Cli, session, write_jsonl

FORMULAS = ["=HYPERLINK(\"http://x\",\"y\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tTAB", "\rCR"]


@pytest.mark.parametrize("text", FORMULAS)
def test_a_cell_a_spreadsheet_would_run_gets_a_quote(text):
    assert spreadsheet_text(text) == "'" + text


@pytest.mark.parametrize("text", ["-0.5", "+3", "-1e3", "vendor/model", "a=b", ""])
def test_numbers_and_plain_text_stay_as_they_are(text):
    assert spreadsheet_text(text) == text


@pytest.fixture
def stored(tmp_path):
    cli = Cli(tmp_path / "council.db")
    lines = session(FORMULAS[0], models=2, reviewers=2)
    for line in lines:
        line["reviewer_id"] = line["reviewer_id"].replace("vendor/model-1", FORMULAS[3])
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    return cli, tmp_path


def test_the_csv_export_quotes_formulas_and_json_keeps_them(stored):
    cli, _ = stored

    rows = list(csv.DictReader(io.StringIO(cli("export", "--csv").stdout)))
    records = [json.loads(line) for line in cli("export").stdout.splitlines()]

    assert {row["session_id"] for row in rows} == {"'" + FORMULAS[0]}
    assert {row["reviewer_id"] for row in rows} == {"vendor/model-0", "'" + FORMULAS[3]}
    assert {row["score_value"] for row in rows} <= {"5.0", "6.0", "7.0"}
    assert {record["session_id"] for record in records} == {FORMULAS[0]}


def test_a_listing_written_as_csv_quotes_formulas(stored):
    cli, folder = stored

    assert cli("sessions", "-o", str(folder / "sessions.csv")).exit_code == 0
    rows = list(csv.DictReader((folder / "sessions.csv").open(encoding="utf-8")))

    assert [row["session_id"] for row in rows] == ["'" + FORMULAS[0]]
