"""`council-db audit` says only what is true of the z-scores it prints: each reviewer's mean
minus the median reviewer mean, over the SD (ddof=1) of the reviewer means. The bound its note
states is the actual largest |z| that statistic can take with that many reviewers, and every
printed z respects it."""

from __future__ import annotations

import re

import numpy as np

from council_db.analysis.sessions.session_audit import median_z_bound
from tests.conftest import record
from tests.conftest import write_jsonl as write_lines

REVIEWER_MEANS = {"r/low": 4.6, "r/mid-a": 6.0, "r/mid-b": 6.0, "r/slight": 5.5}  # z of r/low = -1.74
SPREAD = (-0.3, -0.1, 0.1, 0.3)  # each reviewer's scores of the four answers around its mean


def median_z(means: np.ndarray) -> np.ndarray:
    """The audit's z, from its definition."""
    return (means - np.median(means)) / np.std(means, ddof=1)


def test_every_printed_z_respects_the_bound_the_note_states(cli, tmp_path):
    lines = [record(session_id="one", reviewer_id=reviewer, model_id=f"m/answer-{a}", position=a,
                    score_value=round(mean + SPREAD[a], 1))
             for reviewer, mean in REVIEWER_MEANS.items() for a in range(4)]
    cli("import", str(write_lines(tmp_path / "one.jsonl", lines)))
    out = cli("audit", "one").stdout
    printed = [float(z) for z in re.findall(r" z=([+-]\d+\.\d+)", out)]
    bounds = [float(b) for b in re.findall(r"can never exceed (\d+\.\d+)", out)]
    expected = median_z(np.array(list(REVIEWER_MEANS.values())))
    assert sorted(printed) == sorted(round(z, 2) for z in expected) and -1.74 in printed
    assert bounds == [2.0]  # 4 reviewers: (n-1)/sqrt(n) = 1.50 holds for z about the mean only
    assert all(abs(z) <= bound for z in printed for bound in bounds)


def test_the_bound_is_reached_and_never_exceeded():
    rng = np.random.default_rng(9)
    for n in range(3, 9):
        bound = median_z_bound(n)
        half = n // 2
        # The extreme: one reviewer far above, the lower half and the median at 0, the rest of
        # the upper half at the value that makes the SD smallest.
        rest = n - 2 - half
        extreme = np.array([0.0] * (n - 1 - rest) + [1.0 / (half + 2)] * rest + [1.0])
        assert abs(np.max(np.abs(median_z(extreme))) - bound) < 1e-9
        for _ in range(500):
            means = rng.normal(size=n)
            ties = rng.integers(1, 11, size=n).astype(float)  # a 1-10 integer scale: ties
            for values in (means, ties):
                if np.std(values) > 0:
                    assert np.max(np.abs(median_z(values))) <= bound + 1e-9


def test_the_slot_note_claims_one_shuffle_only_when_the_session_had_one(cli, tmp_path):
    lines = [record(session_id=session, reviewer_id=f"r/{r}", model_id=f"m/answer-{a}",
                    position=(a + (r if session == "varied" else 0)) % 4, score_value=5.0 + a)
             for session in ("shuffled-once", "varied") for r in range(4) for a in range(4)]
    cli("import", str(write_lines(tmp_path / "two.jsonl", lines)))
    assert "with one shuffle per session each slot holds one answer" in cli("audit", "shuffled-once").stdout
    varied = cli("audit", "varied").stdout
    assert "one shuffle" not in varied and "orders differ between reviewers" in varied
