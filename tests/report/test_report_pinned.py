"""The report's figures stay those of the code issue 32 replaced: the demo's report, the
MT-bench report and a 300-reviewer panel's compared field by field, to 1e-9, against the JSON
main wrote (f7815a5) before the distribution functions and resampling loops were vectorised
and before no per-reviewer step repeated whole-panel work (tests/data/report_pinned).
A later minor version of the contract adds fields and its number: the pinned fields are
compared, the version and what was added are not."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from tests import realdata
from tests.conftest import Cli, run_module, same_as_pinned, write_jsonl

PINNED = Path("tests/data/report_pinned")
UNTESTED_CHANGE = "points is more than the whole"  # report/scale_bound.py's warning
PANEL_END = datetime(2026, 11, 1, tzinfo=timezone.utc)  # the panel's times fixed, so its window's are too
# the demo's times fixed as they were when it was pinned: the simulator ends at today's midnight
DEMO = ["--end", "2026-11-28", "--sessions", "300", "--seed", "7",
        "--reviewer-offset", "openai/gpt-4o=-0.8,anthropic/claude-3-5-sonnet=0.6", "--position-effect", "0.4,0,0,-0.2",
        "--self-preference", "0.5", "--verbosity", "0.3", "--unscored", "0.01"]


def report_json(cli: Cli) -> dict:
    answer = cli("bias-report", "--json")
    assert answer.exit_code == 0, answer.output
    return json.loads(answer.stdout)


def pinned(name: str) -> dict:
    return json.loads((PINNED / name).read_text(encoding="utf-8"))


def test_the_demo_report_is_the_one_main_wrote_before_vectorising(tmp_path: Path):
    cli = Cli(tmp_path / "demo.db")
    jsonl = tmp_path / "demo.jsonl"
    assert cli("simulate", "-o", str(jsonl), *DEMO).exit_code == 0
    assert cli("import", "-q", str(jsonl)).exit_code == 0
    assert same_as_pinned(report_json(cli), pinned("demo.json"))


def test_the_mt_bench_report_is_the_one_main_wrote_before_vectorising(tmp_path: Path):
    cli = Cli(tmp_path / "mt.db")
    assert cli(*realdata.mt_bench_import(), "-q").exit_code == 0
    assert same_as_pinned(report_json(cli), pinned("mt-bench.json"))


def panel_records(reviewers: int, candidates: int, sessions: int, seed: int = 32) -> list[dict]:
    """Sessions of 3 records, each a reviewer drawn at random scoring a candidate drawn at
    random (every reviewer and candidate at least once where the records allow): a panel far
    wider than its sessions are deep, as benchmarks/bench_panels.py builds at scale."""
    rng = np.random.default_rng(seed)
    n = sessions * 3
    reviewer = rng.permutation(np.resize(np.arange(reviewers), n))
    candidate = rng.permutation(np.resize(np.arange(candidates), n))
    severity, quality = rng.normal(0, 0.5, reviewers), rng.normal(0, 0.5, candidates)
    score = np.clip(6 + severity[reviewer] + quality[candidate] + rng.normal(0, 1, n), 1, 10).round(1)
    length = rng.integers(200, 3000, n)
    start = int(PANEL_END.timestamp()) - sessions * 3600
    return [{"schema_version": "1.2.0", "session_id": f"s{i // 3:06d}",
             "timestamp": datetime.fromtimestamp(start + i // 3 * 3600, timezone.utc).isoformat(),
             "consent_level": 1, "reviewer_id": f"r/{reviewer[i]}", "model_id": f"m/{candidate[i]}",
             "position": i % 3, "response_length_chars": int(length[i]), "score_value": float(score[i]),
             "score_scale": "1-10"} for i in range(n)]


def test_a_300_reviewer_panels_report_is_the_one_main_wrote(tmp_path: Path):
    cli = Cli(tmp_path / "panel.db")
    assert cli("import", "-q", str(write_jsonl(tmp_path / "panel.jsonl", panel_records(300, 4, 300)))).exit_code == 0
    # a process, as the pinned report's was: BLAS on one thread (a threaded BLAS moves this
    # panel's trend figures across a threshold, main's code as much as today's)
    result = run_module("--db", cli.db, "bias-report", "--format", "json")
    assert result.returncode == 0, result.stderr
    report, expected = json.loads(result.stdout), pinned("panel-300.json")
    # Two reviewers seen in a handful of sessions get a change-point shift the scale cannot
    # hold, warned about and never tested; its size rests on rounding (the block sums' order),
    # so whether it passes the scale's bound is the one thing here that is not pinned.
    assert [w for w in report.pop("warnings") if UNTESTED_CHANGE not in w] == \
        [w for w in expected.pop("warnings") if UNTESTED_CHANGE not in w]
    assert same_as_pinned(report, expected)
