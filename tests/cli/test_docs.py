"""The command guide (docs/commands.md) and --help stay in sync: every command and option is
documented, and the guide names no option that does not exist; the README opens with its two
commands."""

from __future__ import annotations

import re
from pathlib import Path

import click
import typer

from council_db.cli.app import app

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
GUIDE = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")


def _commands() -> dict[str, click.Command]:
    """Top-level command name -> command (groups included)."""
    root = typer.main.get_command(app)
    return dict(root.commands)


GLOBAL = {"--help", "--db"}  # every command takes them; the guide's Conventions explain them once


def _options(command: click.Command) -> set[str]:
    names = {name for param in command.params for name in param.opts if name.startswith("--")}
    for sub in getattr(command, "commands", {}).values():
        names |= _options(sub)
    return names - GLOBAL


def _section(name: str) -> str:
    match = re.search(rf"^## `council-db {name}`\n(.*?)(?=^#{{1,2}} |\Z)", GUIDE, re.S | re.M)
    assert match, f"docs/commands.md has no section '## `council-db {name}`'"
    return match.group(1)


def test_every_command_has_a_guide_section_naming_all_its_options():
    for name, command in _commands().items():
        section = _section(name)
        missing = {option for option in _options(command) if option not in section}
        assert not missing, f"docs/commands.md section for {name} does not mention {sorted(missing)}"


def test_the_guide_names_no_option_a_command_does_not_have():
    for name, command in _commands().items():
        mentioned = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", _section(name)))
        unknown = mentioned - _options(command) - GLOBAL
        assert not unknown, f"docs/commands.md section for {name} names options it does not have: {sorted(unknown)}"


def test_every_db_subcommand_is_documented():
    for sub in _commands()["db"].commands:
        assert f"council-db db {sub}" in _section("db")


def test_the_readme_opens_with_the_demo_and_the_test_command():
    first_block = README.split("```sh", 1)[1].split("```", 1)[0]
    assert "scripts/demo.sh" in first_block
    ci = (ROOT / ".ci" / "run").read_text()
    assert ".venv/bin/python -m pytest" in first_block and ".venv/bin/python -m pytest" in ci
