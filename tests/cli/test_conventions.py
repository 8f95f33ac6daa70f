"""The conventions every command shares (docs/commands.md, "Conventions"): --db anywhere on
the line, one format vocabulary, -o with the format following its suffix, private output
files, help text that reads whole at 80 columns."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from council_db.cli.app import app
from tests.conftest import record, session, write_jsonl


@pytest.fixture
def filled(tmp_path):
    """A database holding one session, and its path."""
    db_path = tmp_path / "council.db"
    data = write_jsonl(tmp_path / "in.jsonl", session() + [record(session_id="other-session")])
    result = CliRunner().invoke(app, ["--db", str(db_path), "import", str(data)])
    assert result.exit_code == 0, result.output
    return db_path


@pytest.mark.parametrize("args", [
    ["--db", "{db}", "stats", "--format", "json"],
    ["stats", "--db", "{db}", "--format", "json"],
    ["stats", "--format", "json", "--db={db}"],
    ["db", "--db", "{db}", "current", "--format", "json"],
    ["db", "current", "--db", "{db}", "--format", "json"],
])
def test_db_is_taken_before_or_after_the_command_at_any_depth(filled, args):
    line = [arg.format(db=filled) for arg in args]

    result = CliRunner().invoke(app, line)

    assert result.exit_code == 0, result.output
    assert "sessions" in json.loads(result.stdout) or json.loads(result.stdout)["up_to_date"] is True


def test_the_db_nearest_the_command_wins(filled, tmp_path):
    result = CliRunner().invoke(app, ["--db", str(tmp_path / "missing.db"), "stats", "--db", str(filled),
                                      "--format", "json"])

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["sessions"] == 2
