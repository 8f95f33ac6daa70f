"""Krippendorff's alpha against published examples and a brute-force implementation of its
definition, and agreement over a window's answers with its session bootstrap."""

from __future__ import annotations

import math
from itertools import permutations

import numpy as np
import pytest

from council_db.analysis.effects.agreement import agreement, self_consistency
from council_db.analysis.loading.score_data import from_records, from_rows
from council_db.analysis.stats import krippendorff_alpha_interval
from council_db.report.builder import build
from council_db.report.render import text
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
    est = agreement(data, 400, np.random.default_rng(0)).alpha
    units: dict[tuple, list[float]] = {}
    for r in records:
        if r["reviewer_id"] != r["model_id"]:
            units.setdefault((r["session_id"], r["model_id"]), []).append(r["score_value"])
    assert est.estimate == pytest.approx(brute_force_alpha(list(units.values())))
    assert est.ci_low < est.estimate < est.ci_high and est.n_sessions == 80 and est.p_value is None
    assert est == agreement(data, 400, np.random.default_rng(0)).alpha  # same seed, same numbers


# --------------------------------------------------------------------------- raters, not records


def rows(scores: list[tuple[str, str, str, float]]) -> list[tuple]:
    """ScoreData rows from (session, reviewer, candidate, score); one length per candidate."""
    lengths = {"m0": 100, "m1": 250, "m2": 400, "m3": 900}
    return [(s, None, reviewer, model, -1, lengths[model], score) for s, reviewer, model, score in scores]


def hand_alpha(units: dict[tuple, dict[str, list[float]]]) -> float:
    """Krippendorff's interval alpha from its coincidence matrix, the first value of each
    reviewer per unit, units with fewer than two reviewers left out (Krippendorff 2011)."""
    values = {unit: [scores[0] for scores in by_reviewer.values()]
              for unit, by_reviewer in units.items() if len(by_reviewer) >= 2}
    coincidence: dict[tuple[float, float], float] = {}
    for unit_values in values.values():
        m = len(unit_values)
        for i in range(m):
            for j in range(m):
                if i != j:
                    key = (unit_values[i], unit_values[j])
                    coincidence[key] = coincidence.get(key, 0.0) + 1.0 / (m - 1)
    n_c: dict[float, float] = {}
    for (c, _), count in coincidence.items():
        n_c[c] = n_c.get(c, 0.0) + count
    n = sum(n_c.values())
    observed = sum(count * (c - k) ** 2 for (c, k), count in coincidence.items()) / n
    expected = sum(n_c[c] * n_c[k] * (c - k) ** 2 for c in n_c for k in n_c) / (n * (n - 1))
    return 1.0 - observed / expected


def test_one_reviewer_scoring_each_answer_twice_is_self_consistency_not_agreement():
    scores = [(f"s{s:02d}", "judge", f"m{m}", float(1 + (3 * s + 2 * m) % 10))
              for s in range(20) for m in range(4) for _ in range(2)]  # every answer scored twice, identically
    data = from_rows(rows(scores))
    result = agreement(data, 200, np.random.default_rng(0))
    assert math.isnan(result.alpha.estimate) and result.units == 0 and result.values == 0
    repeats = self_consistency(data, 200, np.random.default_rng(0))
    assert repeats.pairs == 80 and repeats.units == 80
    assert repeats.identical.estimate == 1.0 and repeats.mean_abs_difference.estimate == 0.0
    assert repeats.identical.n_sessions == 20


def test_alpha_over_answers_matches_a_hand_computed_coincidence_matrix():
    scores = [("s0", "a", "m0", 3.0), ("s0", "b", "m0", 4.0), ("s0", "c", "m0", 3.0),
              ("s0", "a", "m1", 7.0), ("s0", "b", "m1", 6.0), ("s0", "a", "m1", 2.0),  # a's repeat: not a rater
              ("s0", "a", "m2", 5.0),  # one reviewer only: not pairable
              ("s1", "a", "m0", 8.0), ("s1", "c", "m0", 9.0), ("s1", "b", "m0", 9.0),
              ("s1", "b", "m1", 2.0), ("s1", "c", "m1", 2.0), ("s1", "c", "m1", 6.0), ("s1", "c", "m1", 6.0)]
    units: dict[tuple, dict[str, list[float]]] = {}
    for s, reviewer, model, score in scores:
        units.setdefault((s, model), {}).setdefault(reviewer, []).append(score)
    expected = hand_alpha(units)
    data = from_rows(rows(scores))
    assert agreement(data, 0).alpha.estimate == pytest.approx(expected, abs=1e-12)
    unit = [(s, model) for s, _, model, _ in scores]
    assert krippendorff_alpha_interval([hash(u) for u in unit], [v for *_, v in scores],
                                       rater=[r for _, r, _, _ in scores]) == pytest.approx(expected, abs=1e-12)


def test_agreement_counts_only_the_answers_two_reviewers_scored():
    records, _ = simulated(sessions=40, seed=12)
    rng = np.random.default_rng(3)
    lone = sorted({r["session_id"] for r in records})[::2]  # half the sessions: one reviewer only
    kept = [r for r in records if r["session_id"] not in lone or r["reviewer_id"] == "openai/gpt-4o"]
    kept += [dict(r, score_value=float(rng.integers(1, 11))) for r in kept[::7]]  # some repeats
    units: dict[tuple, set[str]] = {}
    for r in kept:
        if r["reviewer_id"] != r["model_id"]:
            units.setdefault((r["session_id"], r["model_id"]), set()).add(r["reviewer_id"])
    contributing = {u: who for u, who in units.items() if len(who) >= 2}
    data = from_records(kept)
    result = agreement(data, 100, np.random.default_rng(0))
    assert result.units == len(contributing) > 0
    assert result.values == sum(len(who) for who in contributing.values())
    assert result.alpha.n_sessions == len({s for s, _ in contributing}) < data.n_sessions
    report = build(data, resamples=100)
    assert (report.agreement.units, report.agreement.n_records, report.agreement.n_sessions) == (
        result.units, result.values, result.alpha.n_sessions)
    assert report.self_consistency.pairs > 0 and "SELF-CONSISTENCY" in text(report)
