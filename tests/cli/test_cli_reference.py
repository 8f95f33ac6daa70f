"""docs/cli.md is every command's --help as it is now: change an option or a help text and
this fails until `python scripts/cli_reference.py` has rewritten the reference."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_the_cli_reference_is_the_help_of_every_command_today():
    check = subprocess.run([sys.executable, "scripts/cli_reference.py", "--check"], cwd=ROOT, capture_output=True,
                           timeout=300)

    assert check.returncode == 0, (check.stderr.decode() or
                                   "docs/cli.md is out of date: run python scripts/cli_reference.py")


def test_it_covers_every_command_and_db_subcommand():
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for name in ("bias-report", "import", "export", "sql", "db check", "db copy"):
        assert f"## `council-db {name}`" in doc
