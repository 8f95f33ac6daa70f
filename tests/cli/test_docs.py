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


def _commands_in(text: str) -> list[str]:
    """The council-db command lines of the README's sh blocks, continuation lines joined."""
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    return [line for line in lines if line.lstrip().startswith("council-db ")]


def test_every_readme_example_on_sample_data_uses_a_database_of_its_own():
    """Sample data imported without --db would land in the user's own store, and the report
    after it would mix the two."""
    commands = _commands_in(README)
    samples = [line for line in commands if "tests/data" in line or "$R/" in line or "demo/" in line]
    reports = [line for line in commands if line.split("#")[0].split()[-1] == "bias-report"]

    assert len(samples) >= 4 and all("--db " in line for line in samples), samples
    assert all("--db " in line for line in reports), reports


def test_the_readmes_audit_example_names_a_session_of_the_demo(tmp_path):
    from tests.conftest import run_module
    from tests.store.test_views import DEMO

    prefix = next(line for line in _commands_in(README) if " audit " in line).split(" audit ")[1].split()[0]
    demo = tmp_path / "demo.jsonl"
    assert run_module("simulate", "-o", str(demo), *DEMO).returncode == 0

    assert any(line.startswith(f'{{"schema_version": "1.2.0", "session_id": "{prefix}') for line in demo.open())


def test_the_readmes_db_copy_takes_the_consent_level_its_yaml_writes():
    """llm-council's LOCAL_ONLY is level 1; db copy takes level 2 and up unless told."""
    levels = {"OFF": 0, "LOCAL_ONLY": 1, "ANONYMOUS": 2, "ENHANCED": 3, "RESEARCH": 4}
    written = levels[re.search(r"consent_level: (\w+)", README).group(1)]
    copy = next(line for line in _commands_in(README) if " db copy " in line)
    asked = int(re.search(r"--min-consent (\d)", copy).group(1)) if "--min-consent" in copy else 2

    assert asked <= written, copy


def test_the_readmes_minimal_line_imports(tmp_path):
    from tests.conftest import run_module

    line = re.search(r"```json\n(.*?)\n```", README, re.S).group(1)
    (tmp_path / "scores.jsonl").write_text(line + "\n")

    result = run_module("--db", str(tmp_path / "council.db"), "import", str(tmp_path / "scores.jsonl"))

    assert result.returncode == 0 and "1 new record" in result.stderr.decode() and " 0 rejected" in result.stderr.decode()
