"""The tables of docs/benchmarks.md, written by the benchmark scripts that measure them
(`--write-docs`), so the figures a reader sees are the ones a script printed, never copied
by hand.

Each table sits between two markers naming it, `<!-- table: NAME -->` and
`<!-- end: NAME -->`; a script replaces what is between them with its table and a line
saying what it ran on (machine, data size, command). Anything outside the markers is prose
and stays as written.
"""

from __future__ import annotations

import os
import platform
import re
import sqlite3
import sys
from collections.abc import Collection
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def markdown_table(header: list[str], rows: list[list[str]], right: Collection[int] = ()) -> str:
    """A Markdown table; columns whose index is in ``right`` are right-aligned (numbers)."""
    rule = ["---:" if i in right else "---" for i in range(len(header))]
    lines = [header, rule, *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def machine() -> str:
    """What the figures were measured on, in one line."""
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"SQLite {sqlite3.sqlite_version}")


def write_table(name: str, table: str, measured_on: str) -> None:
    """Put ``table`` between the markers of ``name`` in docs/benchmarks.md, under a line
    saying what it was measured on and by which command line."""
    text = DOC.read_text(encoding="utf-8")
    begin, end = f"<!-- table: {name} -->", f"<!-- end: {name} -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{DOC} has no '{begin}' ... '{end}' block for this table")
    command = " ".join(["python", f"benchmarks/{Path(sys.argv[0]).name}", *sys.argv[1:]])
    block = f"{begin}\n{table}\n\n_{measured_on}; `{command}`._\n{end}"
    DOC.write_text(pattern.sub(lambda _: block, text, count=1), encoding="utf-8")
    print(f"wrote the '{name}' table of {DOC}")
