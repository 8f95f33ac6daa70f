"""docs/benchmarks.md's tables come from the benchmark scripts: every marked table names a
script that writes it, holds a table, and says what it was measured on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
BLOCKS = dict(re.findall(r"<!-- table: ([\w-]+) -->\n(.*?)<!-- end: \1 -->", DOC, re.S))
SCRIPTS = {path.name: path.read_text(encoding="utf-8") for path in (ROOT / "benchmarks").glob("bench_*.py")}


def test_the_benchmark_document_has_tables():
    assert len(BLOCKS) >= 5
    assert DOC.count("<!-- table: ") == len(BLOCKS), "a table marker has no matching end marker"


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_each_table_is_written_by_a_benchmark_script(name):
    writers = [script for script, source in SCRIPTS.items() if f'"{name}"' in source and "write_table" in source]
    assert writers, f"no benchmarks/bench_*.py writes the '{name}' table"


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_each_table_holds_figures_and_says_what_they_were_measured_on(name):
    block = BLOCKS[name]
    rows = [line for line in block.splitlines() if line.startswith("| ")]
    assert len(rows) >= 3, f"the '{name}' table is empty: run its script with --write-docs"
    assert re.search(r"_.*cores.*`python benchmarks/bench_\w+\.py.*`\._", block), (
        f"the '{name}' table does not say what it was measured on")
