"""The conventions every command shares (docs/commands.md, "Conventions"): --db anywhere on
the line, one format vocabulary, -o with the format following its suffix, private output
files, help text that reads whole at 80 columns."""

from __future__ import annotations

import json
import re

import click
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


def _run(*args: str, input: str | None = None):
    return CliRunner().invoke(app, list(args), input=input)


@pytest.mark.parametrize("shortcut, fmt", [("--json", "json"), ("--nl", "jsonl"), ("--csv", "csv")])
def test_the_shortcuts_are_the_formats(filled, shortcut, fmt):
    short = _run("--db", str(filled), "sessions", shortcut)
    long = _run("--db", str(filled), "sessions", "--format", fmt)

    assert short.exit_code == 0, short.output
    assert short.stdout == long.stdout


def test_a_format_a_command_cannot_write_is_refused_naming_those_it_can(filled):
    result = _run("--db", str(filled), "sessions", "--format", "html")

    assert result.exit_code == 2
    assert "table, json, jsonl or csv" in result.output


def test_two_formats_that_disagree_are_refused(filled):
    result = _run("--db", str(filled), "sessions", "--json", "--format", "csv")

    assert result.exit_code == 2 and "disagree" in result.output


@pytest.mark.parametrize("command, name, expected", [
    (["sessions"], "s.csv", "session_id,"),
    (["sessions"], "s.json", "[\n  {"),
    (["sessions"], "s.jsonl", '{"session_id": '),
    (["stats"], "t.json", "{\n"),
    (["export"], "e.csv", "schema_version,"),
    (["export"], "e.json", "[\n{"),
    (["sql", "SELECT 1 AS one"], "q.csv", "one\n1\n"),
])
def test_the_format_follows_the_outputs_suffix_and_the_file_is_private(filled, tmp_path, command, name, expected):
    target = tmp_path / name

    result = _run("--db", str(filled), *command, "-o", str(target))

    assert result.exit_code == 0, result.output
    assert target.read_text().startswith(expected)
    assert target.stat().st_mode & 0o777 == 0o600
    if name.endswith("json"):
        json.loads(target.read_text())


def test_a_bias_report_written_to_an_html_file_is_html_and_private(filled, tmp_path):
    target = tmp_path / "r.html"

    result = _run("--db", str(filled), "bias-report", "-o", str(target))

    assert result.exit_code == 0, result.output
    assert target.read_text().lstrip().lower().startswith("<!doctype html>")
    assert target.stat().st_mode & 0o777 == 0o600


def test_a_suffix_naming_a_format_the_command_lacks_is_refused_and_no_file_is_made(filled, tmp_path):
    target = tmp_path / "s.html"

    result = _run("--db", str(filled), "sessions", "-o", str(target))

    assert result.exit_code == 2 and "give --format" in result.output
    assert not target.exists()


def test_format_wins_over_the_suffix(filled, tmp_path):
    target = tmp_path / "report.txt"

    result = _run("--db", str(filled), "sessions", "--format", "csv", "-o", str(target))

    assert result.exit_code == 0, result.output
    assert target.read_text().startswith("session_id,")


def test_every_command_that_prints_data_takes_output():
    root = typer_main.get_command(app)
    printing = ["bias-report", "audit", "trends", "anomalies", "export", "orders", "stats", "sessions", "rejected",
                "scores", "leaderboard", "sql"]
    for name in printing:
        assert "-o" in {opt for param in root.commands[name].params for opt in param.opts}, name
    for name in ("current", "history", "check"):
        assert "-o" in {opt for param in root.commands["db"].commands[name].params for opt in param.opts}, name


def _commands_with_output():
    root = typer_main.get_command(app)
    for name, command in [*root.commands.items(), *(("db " + n, c) for n, c in root.commands["db"].commands.items())]:
        params = {param.name: param for param in getattr(command, "params", [])}
        if "output" in params and "fmt" in params:
            yield name, params["fmt"].metavar.split("|"), params["output"].help


def test_the_help_of_o_names_exactly_the_suffixes_the_command_writes():
    from council_db.cli.formats import SUFFIXES, chosen

    checked = 0
    for name, formats, help_text in _commands_with_output():
        named = re.findall(r"(\.[a-z]+)[,; ]", help_text.split("0600)", 1)[1])
        assert all(chosen(tuple(formats), output=f"x{suffix}") == SUFFIXES[suffix] for suffix in named), name
        assert {SUFFIXES[suffix] for suffix in named} == set(SUFFIXES.values()) & set(formats), (name, help_text)
        checked += 1
    assert checked >= 15


def test_sql_binds_parameters_and_reads_the_query_from_stdin(filled):
    result = _run("--db", str(filled), "sql", "-", "-p", "session", "other-session", "-p", "n", "3", "--json",
                  input="SELECT session_id, :n AS n FROM session_summaries WHERE session_id = :session")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"session_id": "other-session", "n": "3"}]


def test_a_sql_parameter_is_a_value_never_sql(filled):
    result = _run("--db", str(filled), "sql", "SELECT :x AS x", "-p", "x", "1; DROP TABLE scores", "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"x": "1; DROP TABLE scores"}]


def test_no_help_text_names_an_adr():
    """llm-council's design records (ADR-015, ...) mean nothing to a user reading --help."""
    root = typer_main.get_command(app)
    texts = [root.get_help(click.Context(root))]
    for command in [*root.commands.values(), *root.commands["db"].commands.values()]:
        texts.append(command.get_help(click.Context(command)))

    assert not [text for text in texts if "ADR" in text]
