"""The repository's own text: no merge left its conflict markers in a tracked file."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(rb"^(<{7} |>{7} |={7}$)", re.M)


def tracked_text_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in listed.decode().split("\0")
            if name and Path(name).suffix in {".py", ".md", ".toml", ".ini", ".sql", ".txt", ".yml", ".yaml"}]


def test_no_tracked_file_holds_a_merge_conflict_marker():
    marked = [str(path.relative_to(ROOT)) for path in tracked_text_files()
              if path.is_file() and MARKER.search(path.read_bytes())]
    assert marked == []
