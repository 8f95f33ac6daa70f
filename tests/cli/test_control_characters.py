"""Stored ids are data: a control character in one (ESC that retitles the window, colours it or
writes the clipboard with OSC 52; a newline that forges a row) is shown as its escape in every
text output, tables, the text report, an audit and messages, while JSON and CSV keep it byte
for byte."""

from __future__ import annotations

import csv
import io
import json

import pytest

from council_db.terminal_text import terminal_text
from tests.conftest import Cli, run_module, session, write_jsonl

RETITLE = "evil\x1b]0;pwned\x07-session"
FORGED = "row\n forged │ 99"
CLIPBOARD = "vendor/\x1b]52;c;SGVsbG8=\x07model"
MIRRORED = "vendor/\u202emodel"
IDS = [f"{RETITLE}-{n}" for n in range(10)] + [FORGED]


def raw_controls(text: str) -> bool:
    """Whether any control character but the lines' own newlines reaches the terminal."""
    return any(terminal_text(line) != line for line in text.splitlines())


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """11 four-reviewer sessions (enough for a report), ids and names holding control characters."""
    folder = tmp_path_factory.mktemp("controls")
    lines = []
    for number, session_id in enumerate(IDS):
        for line in session(session_id, timestamp=f"2025-12-{number + 1:02d}T10:00:00+00:00"):
            for field in ("reviewer_id", "model_id"):
                line[field] = line[field].replace("vendor/model-1", CLIPBOARD).replace("vendor/model-2", MIRRORED)
            lines.append(line)
    cli = Cli(folder / "council.db")
    assert cli("import", str(write_jsonl(folder / "evil.jsonl", lines))).exit_code == 0
    return cli


@pytest.mark.parametrize("command", [["sessions", "--wide"], ["sessions"], ["bias-report"], ["bias-report", "--wide"],
                                     ["bias-report", "--format", "markdown"], ["trends"], ["trends", "--format", "markdown"],
                                     ["sql", "SELECT session_key, '\x1b[31m' AS red FROM sessions"],
                                     ["audit", "row"], ["audit", "row", "--format", "markdown"]])
def test_text_output_shows_control_characters_as_escapes(store, command):
    result = store(*command)

    assert result.exit_code == 0, result.output
    assert not raw_controls(result.stdout), result.stdout
    assert not any(line.lstrip().startswith("forged") for line in result.stdout.splitlines())


def test_an_escaped_id_is_still_recognisable(store):
    shown = store("sessions", "--wide").stdout

    assert "evil\\x1b]0;pwned\\x07-session-0" in shown and "row\\n forged" in shown


def test_json_and_csv_keep_every_byte(store):
    listed = {row["session_id"] for row in json.loads(store("sessions", "--json", "-n", "20").stdout)}
    exported = {row["reviewer_id"] for row in csv.DictReader(io.StringIO(store("export", "--csv").stdout))}

    assert listed == set(IDS)
    assert {CLIPBOARD, MIRRORED} <= exported


def test_a_message_naming_a_file_escapes_it(tmp_path):
    result = run_module("--db", str(tmp_path / "council.db"), "import", str(tmp_path / "a\x1b]0;x\x07\nb.jsonl"))

    error = result.stderr.decode().splitlines()[-1]
    assert result.returncode == 1 and "\x1b" not in result.stderr.decode()
    assert error.startswith("error: ") and "a\\x1b]0;x\\x07\\nb.jsonl: no such file" in error
