"""The report's figures stay those of the scalar code they replaced (issue 32): the demo's
report and the MT-bench report compared field by field, to 1e-9, against the JSON main wrote
before the distribution functions and resampling loops were vectorised (tests/data/report_pinned)."""

from __future__ import annotations

import json
from pathlib import Path

from tests import realdata
from tests.conftest import Cli, same_numbers

PINNED = Path("tests/data/report_pinned")
DEMO = ["--sessions", "300", "--seed", "7", "--reviewer-offset", "openai/gpt-4o=-0.8,anthropic/claude-3-5-sonnet=0.6",
        "--position-effect", "0.4,0,0,-0.2", "--self-preference", "0.5", "--verbosity", "0.3", "--unscored", "0.01"]


def report_json(cli: Cli) -> dict:
    answer = cli("bias-report", "--json")
    assert answer.exit_code == 0, answer.output
    report = json.loads(answer.stdout)
    report.pop("generated_at")
    return report


def pinned(name: str) -> dict:
    report = json.loads((PINNED / name).read_text(encoding="utf-8"))
    report.pop("generated_at")
    return report


def test_the_demo_report_is_the_one_main_wrote_before_vectorising(tmp_path: Path):
    cli = Cli(tmp_path / "demo.db")
    jsonl = tmp_path / "demo.jsonl"
    assert cli("simulate", "-o", str(jsonl), *DEMO).exit_code == 0
    assert cli("import", "-q", str(jsonl)).exit_code == 0
    assert same_numbers(report_json(cli), pinned("demo.json"))


def test_the_mt_bench_report_is_the_one_main_wrote_before_vectorising(tmp_path: Path):
    cli = Cli(tmp_path / "mt.db")
    assert cli(*realdata.mt_bench_import(), "-q").exit_code == 0
    assert same_numbers(report_json(cli), pinned("mt-bench.json"))
