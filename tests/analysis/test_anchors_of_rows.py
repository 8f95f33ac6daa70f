"""subjects.anchors_of_rows, the trend's anchor choice over many resamples at once, chooses
for every row what the one-row purification it replaced chose (issue 32: the resamples'
purifications were 200 Python loops a report). That purification is kept here, as written
before, as the reference."""

from __future__ import annotations

import numpy as np

from council_db.analysis.drift.subjects import _critical_t, anchors, anchors_of_rows, median_of_others


def one_row_anchors(estimates: np.ndarray, cov: np.ndarray, precision: np.ndarray, df: float,
                    alpha: float = 0.2) -> np.ndarray:
    """subjects.anchors as it was before issue 32: one row, one anchor dropped a step."""
    n = len(estimates)
    keep = np.ones(n, dtype=bool)
    scale = np.sqrt(np.maximum(np.diag(cov), 1e-300))
    for _ in range((n - 1) // 2):
        candidates = np.flatnonzero(keep)
        apart = np.abs(estimates[candidates] - median_of_others(estimates[candidates])) / scale[candidates]
        furthest = int(candidates[np.argmax(apart)])
        weights = np.where(keep, precision, 0.0)
        weights[furthest] = 0.0
        contrast = -weights / weights.sum()
        contrast[furthest] += 1.0
        se = float(np.sqrt(max(contrast @ cov @ contrast, 0.0)))
        if not (se > 0 and abs(float(contrast @ estimates)) / se > _critical_t(alpha, df)):
            break
        keep[furthest] = False
    return keep


def test_every_row_gets_the_anchors_the_one_row_purification_gave_it():
    rng = np.random.default_rng(3)
    n = 9
    spread = rng.normal(size=(n, n))
    cov = spread @ spread.T / n * 0.01 + np.diag(rng.uniform(0.005, 0.02, n))
    precision = 1.0 / np.diag(cov)
    rows = rng.normal(scale=0.1, size=(400, n))
    rows[:, :4] += rng.choice([0.0, 0.5, 2.0], size=(400, 4))  # rows dropping 0 to 4 subjects
    together = anchors_of_rows(rows, cov, precision, df=12.0)
    reference = np.array([one_row_anchors(row, cov, precision, df=12.0) for row in rows])
    assert np.array_equal(together, reference)
    assert np.array_equal(np.array([anchors(row, cov, precision, df=12.0) for row in rows[:50]]), reference[:50])
    assert len(set((~together).sum(axis=1).tolist())) >= 4  # rows stopped at different steps
