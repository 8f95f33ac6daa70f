"""The session cells kept only where records are (session_cells.py): the anomaly tests give the
p-values, reasons and flags the dense sessions x reviewers cells gave, to 1e-12, on the demo,
MT-bench's GPT-4 grades (tests/data) and a 1,000-reviewer panel (pinned from the dense code,
commit 172d24a: tests/data/session_cells_pinned); and a wide panel's cells take memory in its
records, not in sessions x reviewers."""

from __future__ import annotations

import io
import json
import tracemalloc
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import ScoreData, from_records
from council_db.analysis.sessions import anomalies
from council_db.analysis.sessions.session_cells import of_records
from council_db.analysis.stats import benjamini_hochberg
from council_db.simulate import SimulationConfig, write_jsonl

PINNED = Path("tests/data/session_cells_pinned")
END = datetime(2026, 11, 28, tzinfo=timezone.utc)


def demo() -> tuple[ScoreData, np.ndarray]:
    """The demo's sessions (scripts/demo.sh's biases) with planted broken ones, and the joint model's residuals."""
    out = io.StringIO()
    write_jsonl(SimulationConfig(sessions=300, seed=7, end=END, anomaly_rate=0.03, verbosity=0.3,
                                 reviewer_offsets={"openai/gpt-4o": -0.8, "anthropic/claude-3-5-sonnet": 0.6},
                                 position_effects=[0.4, 0, 0, -0.2], self_preference=0.5), out)
    data = from_records(json.loads(line) for line in out.getvalue().splitlines())
    return data, joint_model.fit(data).residuals


def mt_bench(tmp_path: Path) -> tuple[ScoreData, np.ndarray]:
    """MT-bench's GPT-4 grades as `council-db import` stores them, and the joint model's residuals."""
    from council_db.analysis.loading.window import Window, load_sample
    from council_db.store.database import open_reader
    from tests import realdata
    from tests.conftest import Cli

    cli = Cli(f"sqlite:///{tmp_path / 'mt.db'}")
    assert cli(*realdata.mt_bench_import(), "-q").exit_code == 0
    data = load_sample(open_reader(cli.db), Window(), 0).data
    return data, joint_model.fit(data).residuals


def wide_panel(reviewers: int = 1_000, sessions: int = 3_000, seed: int = 32) -> tuple[ScoreData, np.ndarray]:
    """Sessions of 4 reviewers (drawn unevenly from ``reviewers``: a few in hundreds of sessions,
    most in a handful) scoring 2 of 4 candidates each, on tenths of 1-10, 2% of sessions one
    score everywhere and 2% with a reviewer answering at random; residuals the scores less
    their session's and their reviewer's means (the tests read residuals, not how they were
    fitted)."""
    rng = np.random.default_rng(seed)
    weight = 1.0 / (np.arange(reviewers) + 10.0)
    panel = np.array([rng.choice(reviewers, 4, replace=False, p=weight / weight.sum()) for _ in range(sessions)])
    session = np.repeat(np.arange(sessions), 8)
    reviewer = np.repeat(panel.ravel(), 2)
    model = np.tile([0, 1], sessions * 4) + 2 * (session % 2)
    severity, quality = rng.normal(0, 0.5, reviewers), rng.normal(0, 0.5, 4)
    score = 6 + severity[reviewer] + quality[model] + rng.normal(0, 1, len(session))
    erratic = rng.random(sessions) < 0.02
    at_random = erratic[session] & (reviewer == panel[session, 0])
    score[at_random] = rng.uniform(1, 10, int(at_random.sum()))
    score = np.clip(score, 1, 10).round(1)
    score[(rng.random(sessions) < 0.02)[session]] = 10.0
    records = [{"session_id": f"s{g:05d}", "reviewer_id": f"r/{r:04d}", "model_id": f"m/{m}", "position": i % 2,
                "score_value": float(s), "score_scale": "1-10", "schema_version": "1.2.0", "consent_level": 1,
                "response_length_chars": 500 + 10 * i % 2000,
                "timestamp": datetime.fromtimestamp(1_700_000_000 + g * 60, timezone.utc).isoformat()}
               for i, (g, r, m, s) in enumerate(zip(session.tolist(), reviewer.tolist(), model.tolist(),
                                                    score.tolist()))]
    data = from_records(records)
    by_session = np.bincount(data.session, weights=data.score) / np.bincount(data.session)
    less_session = data.score - by_session[data.session]
    by_reviewer = np.bincount(data.reviewer, weights=less_session) / np.bincount(data.reviewer)
    return data, less_session - by_reviewer[data.reviewer]


def figures(data: ScoreData, residuals: np.ndarray) -> dict:
    """What the anomaly tests say of every session: p, which test, the reason and spread, the
    flat test alone, and the flags at q <= FDR."""
    tests = anomalies.session_tests(of_records(data, residuals))
    found = anomalies.sessions(data, residuals)
    q = benjamini_hochberg([a.p_value for a in found])
    return {"tested": np.flatnonzero(tests.tested).tolist(), "p": tests.p_value.tolist(),
            "flat_first": tests.flat_first.tolist(), "worst": tests.worst.tolist(),
            "reasons": [a.reason for a in found], "spread": [a.spread_ratio for a in found],
            "flat_p": anomalies.flat_p_values(data).tolist(),
            "flagged": [a.session_id for a, q_value in zip(found, q) if q_value <= anomalies.FDR]}


@pytest.mark.parametrize("name", ["demo", "mt-bench", "panel-1000"])
def test_the_sparse_cells_give_the_dense_cells_p_values_reasons_and_flags(name, tmp_path):
    data, residuals = {"demo": demo, "mt-bench": lambda: mt_bench(tmp_path), "panel-1000": wide_panel}[name]()
    got, expected = figures(data, residuals), json.loads((PINNED / f"{name}.json").read_text(encoding="utf-8"))
    for exact in ("tested", "flat_first", "worst", "reasons", "flagged"):
        assert got[exact] == expected[exact], exact
    for close in ("p", "spread", "flat_p"):
        assert np.max(np.abs(np.array(got[close]) - np.array(expected[close]))) <= 1e-12, close
    assert len(got["tested"]) >= 150 and (got["flagged"] or name == "mt-bench")  # flags compared, not only ones


def test_a_wide_panels_cells_take_memory_in_its_records_not_in_sessions_times_reviewers():
    # 6,000 reviewers over 2,000 sessions of 3 records: the dense cells were 1.2e7 an array (96 MB
    # each float array); kept where records are, at most 6,000 cells.
    rng = np.random.default_rng(1)
    n = 6_000
    records = [{"session_id": f"s{i // 3:05d}", "reviewer_id": f"r/{r}", "model_id": f"m/{m}", "position": i % 3,
                "score_value": float(s), "score_scale": "1-10", "schema_version": "1.2.0", "consent_level": 1,
                "response_length_chars": 800,
                "timestamp": datetime.fromtimestamp(1_700_000_000 + i // 3 * 60, timezone.utc).isoformat()}
               for i, (r, m, s) in enumerate(zip(rng.permutation(np.resize(np.arange(6_000), n)).tolist(),
                                                 rng.integers(0, 4, n).tolist(), rng.integers(1, 11, n).tolist()))]
    data = from_records(records)
    assert len(data.reviewers) == 6_000 and data.n_sessions == 2_000
    tracemalloc.start()
    cells = of_records(data, np.zeros(data.n_records))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(cells.count) == len(np.unique(data.session * 6_000 + data.reviewer))
    assert peak < 5_000_000


def test_a_reviewers_cells_found_by_a_scan_each_or_by_one_sort_give_the_same_tests(monkeypatch):
    # A scan per tested reviewer holds one reviewer's cells (a million 4x4 sessions); one sort
    # serves a wide panel's many tested reviewers: the same columns, so the same tests.
    data, residuals = wide_panel()
    cells = of_records(data, residuals)
    scanned = anomalies.session_tests(cells)
    monkeypatch.setattr(anomalies, "SCANNED_CELLS", 0)
    sorted_once = anomalies.session_tests(cells)
    assert len(set(scanned.worst.tolist())) > 100  # many reviewers tested
    for name in ("p_value", "worst", "ratio", "flat_first"):
        np.testing.assert_array_equal(getattr(scanned, name), getattr(sorted_once, name))
