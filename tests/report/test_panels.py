"""Many reviewers and candidates (issue 32): no per-reviewer or per-subject step of the report
repeats whole-panel work any more (the dense joint model itself still grows with the square
of the panel in memory), and on ordinary stores the report says exactly what it said before.

The reports in tests/data/panels/ were written by `council-db bias-report --format json` at
commit f7815a5 (main before the panel work: a dense rank check solved afresh per column,
one joint-model fit per reviewer over the whole window, per-subject products in trends and
change points), on the stores the tests below build from the same records.
"""

from __future__ import annotations

import json
import math
import tracemalloc
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from council_db.analysis.loading.score_data import from_records
from council_db.report import builder
from tests import realdata
from tests.conftest import Cli, run_module, simulated, write_jsonl

GOLDEN = Path("tests/data/panels")
END = datetime(2026, 11, 1, tzinfo=timezone.utc)  # simulated times fixed, so the window's times are too


def demo_records() -> list[dict]:
    """scripts/demo.sh's simulation, ending at a fixed time."""
    found, _ = simulated(sessions=300, seed=7, end=END, unscored_rate=0.01, self_preference=0.5, verbosity=0.3,
                         reviewer_offsets={"openai/gpt-4o": -0.8, "anthropic/claude-3-5-sonnet": 0.6},
                         position_effects=[0.4, 0, 0, -0.2])
    return found


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
    start = int(END.timestamp()) - sessions * 3600
    return [{"schema_version": "1.2.0", "session_id": f"s{i // 3:06d}",
             "timestamp": datetime.fromtimestamp(start + i // 3 * 3600, timezone.utc).isoformat(),
             "consent_level": 1, "reviewer_id": f"r/{reviewer[i]}", "model_id": f"m/{candidate[i]}",
             "position": i % 3, "response_length_chars": int(length[i]), "score_value": float(score[i]),
             "score_scale": "1-10"} for i in range(n)]


def same_as_golden(old, new, where: str = "report") -> None:
    """Every field of the old report in the new one, numbers equal to 1e-9 relative (fields
    added since are not compared: they have no old value)."""
    if isinstance(old, dict):
        for key in old.keys() - {"generated_at"}:
            assert key in new, f"{where}.{key} is gone"
            same_as_golden(old[key], new[key], f"{where}.{key}")
    elif isinstance(old, list):
        assert len(old) == len(new), where
        for i, (a, b) in enumerate(zip(old, new)):
            same_as_golden(a, b, f"{where}[{i}]")
    elif isinstance(old, float) and isinstance(new, float) and not (math.isnan(old) and math.isnan(new)):
        assert new == pytest.approx(old, rel=1e-9, abs=1e-12), where
    else:
        assert old == new, where


@pytest.mark.parametrize("store", ["demo", "mt-bench", "panel-300"])
def test_report_on_ordinary_stores_is_the_one_main_wrote(store: str, tmp_path: Path) -> None:
    cli = Cli(tmp_path / "council.db")
    if store == "mt-bench":
        arguments = realdata.mt_bench_import()
    else:
        records = demo_records() if store == "demo" else panel_records(300, 4, 300)
        arguments = ["import", str(write_jsonl(tmp_path / "records.jsonl", records))]
    assert cli(*arguments).exit_code == 0
    # a real process, as the golden's: it runs BLAS on one thread (cli/app.py), and this report's
    # trends and flags differ where BLAS runs threaded (main's code as much as this one's)
    result = run_module("--db", cli.db, "bias-report", "--format", "json")
    assert result.returncode == 0, result.stderr
    same_as_golden(json.loads((GOLDEN / f"{store}.json").read_text(encoding="utf-8")), json.loads(result.stdout))


def test_report_on_a_thousand_reviewers_holds_bounded_memory() -> None:
    """1,000 reviewers in 1,000 sessions (a reviewer in about three sessions, every one placed
    by the joint model): the report's numpy arrays peak at about 140 MB, a small multiple of
    the dense design; a P x P array per reviewer, or the change-point permutations held for
    every subject at once, would break the bound."""
    data = from_records(panel_records(1_000, 4, 1_000))
    tracemalloc.start()
    try:
        report = builder.build(data, resamples=100)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(report.reviewers) == 1_000
    assert sum(r.severity is not None for r in report.reviewers) > 900  # placed, not dropped to pass
    assert peak < 200e6, f"peak {peak / 1e6:.0f} MB"
