"""Krippendorff's alpha against published examples and a brute-force implementation of its
definition, and agreement over a window's answers with its session bootstrap."""

from __future__ import annotations

import math
from itertools import permutations

import numpy as np
import pytest

from council_db.analysis.agreement import agreement
from council_db.analysis.score_data import from_records
from council_db.analysis.stats import krippendorff_alpha_interval
from tests.conftest import simulated

nan = np.nan


# --------------------------------------------------------------------------- Krippendorff's alpha


def brute_force_alpha(units: list[list[float]]) -> float:
    """Krippendorff's definition with explicit loops: observed disagreement over ordered
    pairs within units (each unit weighted 1/(m_u - 1)), expected over all ordered pairs of
    pairable values."""
    pairable = [u for u in units if len(u) >= 2]
    values = [v for u in pairable for v in u]
    n = len(values)
    d_o = sum(sum((a - b) ** 2 for a, b in permutations(u, 2)) / (len(u) - 1) for u in pairable) / n
    d_e = sum((a - b) ** 2 for a, b in permutations(values, 2)) / (n * (n - 1))
    return 1 - d_o / d_e


def matrix_to_units(matrix: list[list[float]]) -> tuple[np.ndarray, np.ndarray]:
    data = np.array(matrix, dtype=float)  # coders x units, NaN = missing
    unit = np.tile(np.arange(data.shape[1]), (data.shape[0], 1)).ravel()
    value = data.ravel()
    return unit[~np.isnan(value)], value[~np.isnan(value)]


def test_krippendorff_alpha_interval_reproduces_published_examples():
    # Krippendorff (2011) "Computing Krippendorff's alpha-reliability", 4 coders x 12 units: interval 0.849
    k2011 = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
             [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
             [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
             [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    assert krippendorff_alpha_interval(*matrix_to_units(k2011)) == pytest.approx(0.849, abs=5e-4)
    # Wikipedia's computational example, 3 coders x 15 units: interval 0.810845
    wiki = [[nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
            [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
            [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4]]
    assert krippendorff_alpha_interval(*matrix_to_units(wiki)) == pytest.approx(0.810845, abs=1e-6)


def test_krippendorff_alpha_interval_matches_brute_force_definition():
    rng = np.random.default_rng(10)
    units = [list(rng.normal(rng.normal(), 0.7, size=rng.integers(1, 6))) for _ in range(40)]
    unit = np.concatenate([[i] * len(u) for i, u in enumerate(units)])
    value = np.concatenate(units)
    assert krippendorff_alpha_interval(unit, value) == pytest.approx(brute_force_alpha(units))
    assert krippendorff_alpha_interval([0, 0, 1, 1], [2.0, 2.0, 5.0, 5.0]) == pytest.approx(1.0)
    assert math.isnan(krippendorff_alpha_interval([0, 1, 2], [1.0, 2.0, 3.0]))  # nothing pairable
    assert math.isnan(krippendorff_alpha_interval([0, 0, 1, 1], [3.0, 3.0, 3.0, 3.0]))  # no variation


def test_agreement_is_alpha_over_answers_with_a_session_bootstrap_ci():
    records, _ = simulated(sessions=80, seed=11, model_quality={"openai/gpt-4o": 1.5, "google/gemini-1.5-pro": -1.0})
    data = from_records(records)
    est = agreement(data, 400, np.random.default_rng(0))
    units: dict[tuple, list[float]] = {}
    for r in records:
        if r["reviewer_id"] != r["model_id"]:
            units.setdefault((r["session_id"], r["model_id"]), []).append(r["score_value"])
    assert est.estimate == pytest.approx(brute_force_alpha(list(units.values())))
    assert est.ci_low < est.estimate < est.ci_high and est.n_sessions == 80 and est.p_value is None
    assert est == agreement(data, 400, np.random.default_rng(0))  # same seed, same numbers
