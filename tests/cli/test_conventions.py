"""The conventions every command shares (docs/commands.md, "Conventions"): --db anywhere on
the line, one format vocabulary, -o with the format following its suffix, private output
files, help text that reads whole at 80 columns."""

from __future__ import annotations

import json
import re

import pytest
from typer import main as typer_main
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


def _command_paths(command=None, path=()):
    """Every command's path from the root, groups included (each built)."""
    command = command or typer_main.get_command(app)
    yield path
    for name in getattr(command, "commands", {}):
        yield from _command_paths(command.commands[name], (*path, name))


def _help(*path: str) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("path", list(_command_paths()), ids=lambda p: " ".join(p) or "council-db")
def test_help_shows_plain_metavars(path):
    """Metavars as a person writes them (N, FILE, table|json), not Python's types (<int range>,
    <list[str]>) or {braces} around an argument."""
    text = _help(*path)
    usage = [line for line in text.splitlines() if line.startswith("Usage:")]
    declared = [line.strip().split("  ")[0] for line in text.splitlines() if line.lstrip().startswith("-")]

    for shown in usage + declared:  # an option's names and metavar, before its help
        assert not re.search(r"[<>{}]|list\[|\bstr\b|\bint\b", shown), (path, shown)


@pytest.mark.parametrize("group", [(), ("db",)], ids=["council-db", "db"])
def test_every_listed_summary_is_a_whole_sentence_at_80_columns(group):
    listing = _help(*group).split("Commands:", 1)[1]
    command = typer_main.get_command(app)
    for name in group:
        command = command.commands[name]

    for name, sub in command.commands.items():
        line = next(line for line in listing.splitlines() if line.split()[:1] == [name])
        shown = line.split(None, 1)[1]
        first_sentence = (sub.help or "").split("\n\n")[0].replace("\n", " ")
        assert shown.endswith(".") and not shown.endswith("..."), (name, shown)
        assert first_sentence.startswith(shown), (name, shown)
