"""The report's figures stay those of the scalar code they replaced (issue 32): the demo's
report and the MT-bench report compared field by field, to 1e-9, against the JSON main wrote
before the distribution functions and resampling loops were vectorised (tests/data/report_pinned).
A later minor version of the contract adds fields and its number: the pinned fields are
compared, the version and what was added are not."""

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
    return json.loads(answer.stdout)


def pinned(name: str) -> dict:
    return json.loads((PINNED / name).read_text(encoding="utf-8"))


def same_as_pinned(report: dict, name: str) -> bool:
    """The report's pinned fields equal the pinned file's (to 1e-9): every field the pinned
    report has, the report has too, with its value; fields a later minor version added are
    left out, as are the time it was made and the contract's version."""
    expected = pinned(name)
    for unpinned in ("generated_at", "report_schema_version"):
        expected.pop(unpinned), report.pop(unpinned)
    return same_numbers(pinned_fields(report, expected), expected)


def pinned_fields(value, like):
    """``value`` cut down to the keys of ``like``, dict by dict and item by item."""
    if isinstance(like, dict) and isinstance(value, dict):
        return {key: pinned_fields(value[key], like[key]) if key in value else _missing(key) for key in like}
    if isinstance(like, list) and isinstance(value, list) and len(like) == len(value):
        return [pinned_fields(item, pattern) for item, pattern in zip(value, like)]
    return value


def _missing(key: str):
    raise AssertionError(f"the report lost the pinned field {key!r}")


def test_the_demo_report_is_the_one_main_wrote_before_vectorising(tmp_path: Path):
    cli = Cli(tmp_path / "demo.db")
    jsonl = tmp_path / "demo.jsonl"
    assert cli("simulate", "-o", str(jsonl), *DEMO).exit_code == 0
    assert cli("import", "-q", str(jsonl)).exit_code == 0
    assert same_as_pinned(report_json(cli), "demo.json")


def test_the_mt_bench_report_is_the_one_main_wrote_before_vectorising(tmp_path: Path):
    cli = Cli(tmp_path / "mt.db")
    assert cli(*realdata.mt_bench_import(), "-q").exit_code == 0
    assert same_as_pinned(report_json(cli), "mt-bench.json")
