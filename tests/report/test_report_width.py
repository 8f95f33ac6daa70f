"""The text report fits a terminal: 80 columns by default (prose wrapped, tables narrowed,
long names on lines of their own), a narrower $COLUMNS too, and --wide gives every table
whole, one line per row, as the listings do."""

from __future__ import annotations

import pytest

from council_db.cli.app import app
from tests.conftest import Cli
from tests.realdata import fastchat_import, mt_bench_import
from tests.store.test_views import DEMO

PAIR = "tests/data/fastchat-pair/mt_bench"
IMPORTS = {
    "demo": [["simulate", "-o", "{folder}/demo.jsonl", *DEMO], ["import", "{folder}/demo.jsonl"]],
    "realdata": [mt_bench_import(), fastchat_import("vicuna-13b-20230322-clean-lang")],
    "fastchat-pair": [["import", "--from", "fastchat-pair", f"{PAIR}/model_judgment/gpt-4_pair.jsonl",
                       "--answers", f"{PAIR}/model_answer"]],
}


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Cli]:
    """The demo's store, the public judge data in tests/data, and FastChat's pairwise judgments."""
    made = {}
    for name, commands in IMPORTS.items():
        folder = tmp_path_factory.mktemp(name)
        cli = Cli(folder / "council.db")
        for command in commands:
            assert cli(*(arg.format(folder=folder) for arg in command)).exit_code in (0, 3)
        made[name] = cli
    return made


def report(cli: Cli, *options: str, columns: int = 80) -> list[str]:
    result = cli.runner.invoke(app, ["--db", cli.db, "bias-report", *options], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


@pytest.mark.parametrize("store", IMPORTS)
def test_no_line_of_the_text_report_is_wider_than_80_columns(stores, store):
    lines = report(stores[store])

    assert max(map(len, lines)) <= 80, "\n".join(line for line in lines if len(line) > 80)
    assert any(line.startswith("REVIEWERS") for line in lines)


def test_a_narrower_terminal_gets_a_narrower_report(stores):
    assert max(map(len, report(stores["demo"], columns=60))) <= 60


def test_the_reviewer_table_keeps_a_row_per_reviewer_with_its_records_severity_and_chart(stores):
    lines = report(stores["demo"])

    header = next(i for i, line in enumerate(lines) if line.startswith("  reviewer "))
    assert lines[header].split()[:3] == ["reviewer", "records", "severity"]
    rows = lines[header + 1:header + 5]
    assert [row.split()[0] for row in rows] == sorted(row.split()[0] for row in rows)
    assert all("[" in row and "●" in row for row in rows)  # the interval and its chart


def test_wide_gives_the_full_tables(stores):
    lines = report(stores["demo"], "--wide")

    header = next(line for line in lines if line.startswith("  reviewer "))
    assert all(column in header for column in ("raw mean", "class", "scale SD", "self-preference"))
    harsh = next(line for line in lines if line.startswith("  openai/gpt-4o "))
    assert "harsh" in harsh and harsh.count("[") == 2  # severity and self-preference, on the reviewer's one line
    assert max(map(len, lines)) > 80


@pytest.mark.parametrize("store", IMPORTS)
def test_the_text_report_names_no_design_record_a_reader_cannot_look_up(stores, store):
    assert not [line for line in report(stores[store]) if "ADR" in line]
