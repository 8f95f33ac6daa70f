"""council_db.analysis.stats against independent references: published examples, brute-force
implementations of the definitions, hand-computed values and coverage simulations."""

from __future__ import annotations

import io
import json
import math
from fractions import Fraction
from itertools import permutations

import numpy as np
import pytest
import scipy.stats

from council_db.analysis.answers import agreement, answer_table, naive_pooled_r
from council_db.analysis.score_data import from_records, from_rows
from council_db.analysis.stats import (
    Estimate,
    benjamini_hochberg,
    clustered_mean,
    clustered_mean_from_totals,
    confidence_tier,
    correlation_p_value,
    expanded_tail,
    krippendorff_alpha_interval,
    mean_fisher_z_r,
    meta_analysis,
    per_session_correlations,
    per_session_r,
    percentile_interval,
    pooled_r_over_records,
    resampled_sums,
    session_moments,
    session_weights,
    t_interval,
    t_p_value,
    within_session_correlation,
)
from council_db.simulate import SimulationConfig, write_jsonl

nan = np.nan


def simulated(**config) -> tuple[list[dict], dict]:
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(**config), out)
    return [json.loads(line) for line in out.getvalue().splitlines()], truth


def bivariate_sessions(rng: np.random.Generator, sessions: int, answers: int, rho: float):
    """(session, x, y) with within-session correlation rho and session-level shifts."""
    u = rng.standard_normal((sessions, answers))
    v = rho * u + math.sqrt(1 - rho**2) * rng.standard_normal((sessions, answers))
    x = u + rng.standard_normal((sessions, 1))
    y = 5 + v + 2 * rng.standard_normal((sessions, 1))
    return np.repeat(np.arange(sessions), answers), x.ravel(), y.ravel()


# --------------------------------------------------------------------------- tiers, t, BH


@pytest.mark.parametrize("sessions, tier", [(0, "insufficient"), (9, "insufficient"), (10, "preliminary"),
                                            (19, "preliminary"), (20, "moderate"), (49, "moderate"),
                                            (50, "high"), (100_000, "high")])
def test_confidence_tier_boundaries_follow_adr_018(sessions, tier):
    assert confidence_tier(sessions) == tier


def test_per_session_p_value_uses_t_so_r_08_at_n_5_is_about_010_not_002():
    p = float(correlation_p_value(0.8, 5))
    assert p == pytest.approx(0.1041, abs=5e-4)
    # the reference: scipy's own test of a Pearson r on points with exactly r = 0.8
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    noise = np.array([1.0, -2.0, 0.0, 2.0, -1.0])  # orthogonal to x and to the constant
    y = 0.8 * x / np.linalg.norm(x) + 0.6 * noise / np.linalg.norm(noise)
    result = scipy.stats.pearsonr(x, y)
    assert result.statistic == pytest.approx(0.8)
    assert p == pytest.approx(result.pvalue)
    t = 0.8 * math.sqrt(3 / (1 - 0.8**2))
    assert 2 * scipy.stats.norm.sf(t) == pytest.approx(0.021, abs=1e-3)  # the same t read as normal: wrong


def test_correlation_p_value_edge_cases_are_nan_or_zero():
    p = correlation_p_value(np.array([0.5, 1.0, -1.0, nan, 0.0]), np.array([2, 4, 4, 5, 5]))
    assert math.isnan(p[0]) and p[1] == 0 and p[2] == 0 and math.isnan(p[3]) and p[4] == pytest.approx(1.0)


def test_t_p_value_and_interval_match_scipy():
    assert t_p_value(2.3, 7) == pytest.approx(2 * scipy.stats.t.sf(2.3, 7))
    assert t_p_value(-2.3, 7) == pytest.approx(t_p_value(2.3, 7))
    assert math.isnan(t_p_value(1.0, 0))
    low, high = t_interval(1.5, 0.4, 12, 0.9)
    ref = scipy.stats.t.interval(0.9, 12, loc=1.5, scale=0.4)
    assert (low, high) == pytest.approx(ref)
    assert all(math.isnan(v) for v in t_interval(1.0, 0.5, 0))


def test_benjamini_hochberg_hand_example_with_nan():
    # sorted: 0.005, 0.01, 0.03, 0.04 (m = 4, the NaN does not count)
    # p * m / rank: 0.02, 0.02, 0.04, 0.04 -> already monotone
    q = benjamini_hochberg([0.01, 0.04, 0.03, 0.005, nan])
    np.testing.assert_allclose(q[:4], [0.02, 0.04, 0.04, 0.02])
    assert math.isnan(q[4])


def test_benjamini_hochberg_takes_running_minimum_and_caps_at_one():
    # sorted p*m/rank: 0.01*3/1 = 0.03, 0.04*3/2 = 0.06, 0.045*3/3 = 0.045 -> q = 0.03, 0.045, 0.045
    np.testing.assert_allclose(benjamini_hochberg([0.045, 0.01, 0.04]), [0.045, 0.03, 0.045])
    np.testing.assert_allclose(benjamini_hochberg([0.9, 1.0, 0.95]), [1.0, 1.0, 1.0])
    assert len(benjamini_hochberg([])) == 0


def test_benjamini_hochberg_matches_scipy_false_discovery_control():
    p = np.random.default_rng(3).uniform(size=40) ** 3
    np.testing.assert_allclose(benjamini_hochberg(p), scipy.stats.false_discovery_control(p))


# --------------------------------------------------------------------------- clustered means


def sandwich_se(design: np.ndarray, y: np.ndarray, cluster: np.ndarray) -> np.ndarray:
    """Textbook CR1 sandwich with explicit matrices and a loop over clusters."""
    n, k = design.shape
    bread = np.linalg.inv(design.T @ design)
    beta = bread @ design.T @ y
    resid = y - design @ beta
    meat = np.zeros((k, k))
    groups = np.unique(cluster)
    for g in groups:
        score = design[cluster == g].T @ resid[cluster == g]
        meat += np.outer(score, score)
    g = len(groups)
    v = g / (g - 1) * (n - 1) / (n - k) * bread @ meat @ bread
    return np.sqrt(np.diag(v))


def test_clustered_mean_se_matches_explicit_sandwich():
    rng = np.random.default_rng(1)
    cluster = rng.integers(0, 30, size=400)
    values = rng.standard_normal(30)[cluster] + rng.standard_normal(400)
    est = clustered_mean(values, cluster)
    assert est.estimate == pytest.approx(values.mean())
    assert est.se == pytest.approx(sandwich_se(np.ones((400, 1)), values, cluster)[0])
    g = len(np.unique(cluster))
    assert (est.ci_low, est.ci_high) == pytest.approx(scipy.stats.t.interval(0.95, g - 1, est.estimate, est.se))
    assert est.n_sessions == g


def test_clustered_mean_ci_is_wider_than_naive_when_sessions_move_together():
    rng = np.random.default_rng(2)
    cluster = np.repeat(np.arange(50), 16)
    values = rng.standard_normal(50)[cluster] + 0.5 * rng.standard_normal(800)
    est = clustered_mean(values, cluster)
    naive_se = values.std(ddof=1) / math.sqrt(len(values))
    assert est.ci_high - est.ci_low > 3 * (2 * 1.96 * naive_se)


def test_clustered_mean_handles_bools_labels_and_too_few_clusters():
    share = clustered_mean(np.array([True, False, True, True]), np.array(["a", "a", "b", "b"]))
    assert share.estimate == pytest.approx(0.75) and share.n_sessions == 2
    one = clustered_mean([1.0, 2.0, 3.0], [7, 7, 7])
    assert one.estimate == pytest.approx(2.0) and math.isnan(one.ci_low) and math.isnan(one.p_value)
    empty = clustered_mean([], [])
    assert not empty.computable


def test_clustered_mean_from_totals_equals_records_version():
    rng = np.random.default_rng(4)
    cluster = rng.integers(0, 12, size=100)
    values = rng.normal(3, 1, size=100)
    from_records = clustered_mean(values, cluster, null=3.0)
    totals = np.bincount(cluster, weights=values)
    counts = np.bincount(cluster)
    assert clustered_mean_from_totals(totals, counts, null=3.0) == from_records


def test_session_weights_are_multinomial_counts_in_bounded_blocks():
    blocks = list(session_weights(1000, 25, np.random.default_rng(0), max_cells=10_000))
    assert [len(b) for b in blocks] == [10, 10, 5]  # 10 rows x 1000 sessions per block
    weights = np.vstack(blocks)
    assert weights.shape == (25, 1000) and (weights.sum(axis=1) == 1000).all() and (weights >= 0).all()
    assert weights.mean() == pytest.approx(1.0) and 0.9 < weights.var() < 1.1  # Binomial(S, 1/S)


def test_resampled_sums_are_the_sums_of_resampled_sessions_and_reproducible():
    values = np.random.default_rng(1).standard_normal((50, 3))
    sums = resampled_sums(values, 30, np.random.default_rng(9), max_cells=500)
    weights = np.vstack(list(session_weights(50, 30, np.random.default_rng(9), max_cells=500)))
    expected = np.array([np.repeat(values, w.astype(int), axis=0).sum(axis=0) for w in weights])
    np.testing.assert_allclose(sums, expected)
    np.testing.assert_array_equal(sums, resampled_sums(values, 30, 9, max_cells=500))


def test_percentile_interval_uses_quantiles_and_expands_with_few_sessions():
    samples = np.arange(1001, dtype=float)
    assert percentile_interval(samples, 0.9) == pytest.approx((50.0, 950.0))
    low, high = percentile_interval(samples, 0.95, n_sessions=10)
    assert low < 25 and high > 975
    assert expanded_tail(0.95, 100_000) == pytest.approx(0.025, abs=1e-4)
    assert all(math.isnan(v) for v in percentile_interval(np.array([1.0, nan, nan]), 0.95))


# --------------------------------------------------------------------------- answers, per-session r


def test_answer_table_has_one_row_per_answer_with_mean_over_other_reviewers():
    records, _ = simulated(sessions=30, seed=3, self_preference=1.0, verbosity=0.5)
    data = from_records(records)
    answers = answer_table(data)
    assert len(answers) == 30 * 4
    groups: dict[tuple, list[float]] = {}
    for r in records:
        if r["reviewer_id"] != r["model_id"]:
            groups.setdefault((r["session_id"], r["model_id"]), []).append(r["score_value"])
    key = data.session_keys[answers.session[5]], data.models[answers.model[5]]
    assert answers.mean_score[5] == pytest.approx(np.mean(groups[key]))
    assert answers.n_scores[5] == 3
    assert answers.length[5] == pytest.approx(
        next(r["response_length_chars"] for r in records if (r["session_id"], r["model_id"]) == key))
    assert len(answer_table(data, include_self=True)) == len(answers)


def test_answer_table_keeps_two_labels_of_one_model_apart_by_length():
    rows = [("s1", None, "rev", "m", 0, 100, 6.0), ("s1", None, "rev", "m", 1, 900, 8.0),
            ("s1", None, "rev2", "m", 0, 100, 7.0), ("s1", None, "rev2", "m", 1, 900, 9.0)]
    answers = answer_table(from_rows(rows))
    assert len(answers) == 2
    np.testing.assert_allclose(answers.length, [100, 900])
    np.testing.assert_allclose(answers.mean_score, [6.5, 8.5])


def test_per_session_correlations_match_numpy_corrcoef_and_are_nan_when_undefined():
    records, _ = simulated(sessions=20, seed=4, verbosity=1.0)
    answers = answer_table(from_records(records))
    r_s, n_s = per_session_correlations(answers)
    for s in (0, 7, 19):
        here = answers.session == s
        assert r_s[s] == pytest.approx(np.corrcoef(answers.log_length[here], answers.mean_score[here])[0, 1])
        assert n_s[s] == here.sum()
    moments = session_moments(np.array([0, 0, 1, 1, 1, 2, 2, 2]), np.array([1, 2, 1, 2, 3, 1, 2, 3.0]),
                              np.array([1, 2, 5, 5, 5, 1, 3, 2.0]))
    r = per_session_r(moments)
    assert math.isnan(r[0]) and math.isnan(r[1]) and r[2] == pytest.approx(0.5)


# --------------------------------------------------------------------------- naive pooled r


def llm_council_pooled(lengths: list[float], scores: list[float]):
    """A line-by-line transcription of llm-council's pooled_correlation_with_ci arithmetic."""
    n = len(lengths)
    mx, my = sum(lengths) / n, sum(scores) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(lengths, scores))
    sx = math.sqrt(sum((a - mx) ** 2 for a in lengths))
    sy = math.sqrt(sum((b - my) ** 2 for b in scores))
    r = 0.0 if sx == 0 or sy == 0 else cov / (sx * sy)
    rc = 0.9999 if r >= 1 else -0.9999 if r <= -1 else r
    z = 0.5 * math.log((1 + rc) / (1 - rc))
    se = 1 / math.sqrt(n - 3) if n > 3 else 1.0
    return r, math.tanh(z - 1.96 * se), math.tanh(z + 1.96 * se)


def test_naive_pooled_r_replicates_llm_council_over_all_records():
    records, _ = simulated(sessions=40, seed=5, verbosity=0.8, self_preference=1.0)
    data = from_records(records)
    est = naive_pooled_r(data)
    r, low, high = llm_council_pooled([rec["response_length_chars"] for rec in records],
                                      [rec["score_value"] for rec in records])
    assert (est.estimate, est.ci_low, est.ci_high) == pytest.approx((r, low, high))
    assert est.se == pytest.approx(1 / math.sqrt(len(records) - 3))
    with pytest.raises(TypeError, match="mean_fisher_z_r"):
        naive_pooled_r(*per_session_correlations(answer_table(data)))  # type: ignore[call-arg]


def test_naive_pooled_r_edge_cases_follow_llm_council():
    assert not pooled_r_over_records(np.arange(9.0), np.arange(9.0)).computable  # < 10 records: None there
    flat = pooled_r_over_records(np.arange(12.0), np.full(12, 7.0))
    assert flat.estimate == 0.0
    perfect = pooled_r_over_records(np.arange(12.0), np.arange(12.0))
    assert perfect.estimate == pytest.approx(1.0) and perfect.ci_high < 1.0  # z clamped at r = 0.9999


def test_mean_fisher_z_r_is_the_write_ups_pooling():
    r = np.array([0.1, 0.5, -0.2, 0.3, 1.0, nan] + [0.2] * 8)
    est = mean_fisher_z_r(r)
    used = [0.1, 0.5, -0.2, 0.3] + [0.2] * 8
    z = sum(0.5 * math.log((1 + v) / (1 - v)) for v in used) / len(used)
    se = 1 / math.sqrt(len(used) - 3)
    assert (est.estimate, est.ci_low, est.ci_high) == pytest.approx(
        (math.tanh(z), math.tanh(z - 1.96 * se), math.tanh(z + 1.96 * se)))
    assert not mean_fisher_z_r(r[:6]).computable  # fewer than 10 sessions


# --------------------------------------------------------------------------- meta-analysis


def test_meta_analysis_matches_hand_computed_dersimonian_laird():
    # z = 0, 1, 2 with n = 4, 5, 7 -> w = 1, 2, 4 (exact fractions by hand):
    # fixed z = 10/7; Q = 100/49 + 2*9/49 + 4*16/49 = 26/7; C = 7 - 21/7 = 4;
    # tau2 = (26/7 - 2)/4 = 3/7; I2 = (12/7)/(26/7) = 6/13; w* = 7/10, 14/13, 28/19.
    w_star = [Fraction(7, 10), Fraction(14, 13), Fraction(28, 19)]
    z_random = (w_star[1] * 1 + w_star[2] * 2) / sum(w_star)
    meta = meta_analysis(np.tanh([0.0, 1.0, 2.0]), [4, 5, 7])
    assert meta.z_fixed == pytest.approx(10 / 7)
    assert meta.se_fixed == pytest.approx(1 / math.sqrt(7))
    assert meta.q == pytest.approx(26 / 7) and meta.df == 2
    assert meta.tau2 == pytest.approx(3 / 7)
    assert meta.i2 == pytest.approx(6 / 13)
    assert meta.z_random == pytest.approx(float(z_random))
    assert meta.se_random == pytest.approx(1 / math.sqrt(float(sum(w_star))))
    assert meta.fixed.estimate == pytest.approx(math.tanh(10 / 7))
    crit = scipy.stats.norm.ppf(0.975)
    assert meta.random.ci_low == pytest.approx(math.tanh(float(z_random) - crit * meta.se_random))
    assert meta.q_p_value == pytest.approx(scipy.stats.chi2.sf(26 / 7, 2))
    assert meta.k == 3 and meta.dropped == 0


def brute_force_dl(r: list[float], n: list[int]) -> tuple[float, float, float, float]:
    z = [0.5 * math.log((1 + a) / (1 - a)) for a in r]
    w = [b - 3 for b in n]
    fe = sum(wi * zi for wi, zi in zip(w, z)) / sum(w)
    q = sum(wi * (zi - fe) ** 2 for wi, zi in zip(w, z))
    tau2 = max(0.0, (q - (len(z) - 1)) / (sum(w) - sum(wi * wi for wi in w) / sum(w)))
    ws = [1 / (1 / wi + tau2) for wi in w]
    re = sum(wi * zi for wi, zi in zip(ws, z)) / sum(ws)
    return fe, q, tau2, re


def test_meta_analysis_matches_brute_force_and_counts_dropped_sessions():
    rng = np.random.default_rng(6)
    r = list(np.tanh(rng.normal(0.3, 0.5, size=25)))
    n = list(rng.integers(4, 30, size=25))
    meta = meta_analysis(r + [0.5, 1.0, nan, 0.2], n + [3, 5, 5, 2])
    fe, q, tau2, re = brute_force_dl(r, n)
    assert (meta.z_fixed, meta.q, meta.tau2, meta.z_random) == pytest.approx((fe, q, tau2, re))
    assert meta.k == 25 and meta.dropped == 4
    assert meta.dropped_reasons == {"too_few_answers": 2, "perfect_correlation": 1, "no_correlation": 1}
    assert math.isnan(meta_analysis([nan], [5]).fixed.estimate)


# --------------------------------------------------------------------------- within-session r


def test_within_session_correlation_is_the_correlation_of_session_demeaned_points():
    rng = np.random.default_rng(7)
    session, x, y = bivariate_sessions(rng, 60, 5, 0.4)
    xd = x - np.repeat(x.reshape(60, 5).mean(axis=1), 5)
    yd = y - np.repeat(y.reshape(60, 5).mean(axis=1), 5)
    est = within_session_correlation(session, x, y, 200, rng)
    assert est.estimate == pytest.approx((xd @ yd) / math.sqrt((xd @ xd) * (yd @ yd)))
    assert est.ci_low < est.estimate < est.ci_high and est.n_sessions == 60
    shifted = within_session_correlation(session, x + 10 * session, y - 3 * session, 200, 1)
    assert shifted.estimate == pytest.approx(est.estimate)  # session shifts cancel
    analytic = within_session_correlation(session, x, y, 0)
    assert analytic.estimate == est.estimate and analytic.ci_low < est.estimate < analytic.ci_high
    assert not within_session_correlation([0, 0], [1.0, 2.0], [3.0, 1.0], 50, 1).has_interval


def test_headline_keeps_nominal_coverage_where_pooled_fisher_z_fails():
    """n = 4 answers per session, 500 sessions, 100 data sets per rho: the headline's 95% CI
    covers rho near 95% of the time; at rho = 0.5 fixed effect and the write-up's mean
    Fisher z are biased and almost never cover (PRODUCT.md: ~10%), llm-council's record-level
    r is attenuated by session shifts and never covers."""
    rng = np.random.default_rng(2025)
    coverage = {}
    for rho in (0.0, 0.5):
        hits = {"headline": 0, "fixed": 0, "writeup": 0, "records": 0}
        for _ in range(100):
            session, x, y = bivariate_sessions(rng, 500, 4, rho)
            hits["headline"] += within_session_correlation(session, x, y, 400, rng).covers(rho)
            moments = session_moments(session, x, y)
            r_s = per_session_r(moments)
            hits["fixed"] += meta_analysis(r_s, moments.n).fixed.covers(rho)
            hits["writeup"] += mean_fisher_z_r(r_s).covers(rho)
            hits["records"] += pooled_r_over_records(x, y).covers(rho)
        coverage[rho] = {k: v / 100 for k, v in hits.items()}
    assert coverage[0.0]["headline"] >= 0.88 and coverage[0.5]["headline"] >= 0.88
    assert coverage[0.5]["fixed"] < 0.3 and coverage[0.5]["writeup"] < 0.3
    assert coverage[0.5]["records"] < 0.2


def test_headline_finds_planted_verbosity_in_simulator_output():
    records, _ = simulated(sessions=300, seed=8, verbosity=0.6)
    answers = answer_table(from_records(records))
    est = within_session_correlation(answers.session, answers.log_length, answers.mean_score, 500, 1)
    assert est.ci_low > 0.2 and est.p_value < 1e-6
    null = answer_table(from_records(simulated(sessions=300, seed=9)[0]))
    none = within_session_correlation(null.session, null.log_length, null.mean_score, 500, 1)
    assert none.ci_low < 0 < none.ci_high


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


def test_estimate_missing_values_follow_one_rule():
    e = Estimate.missing("x", 3)
    assert not e.computable and not e.has_interval and not e.covers(0.0) and math.isnan(e.se)
    assert Estimate(0.2, 0.1, 0.3).covers(0.1) and Estimate(0.2, 0.1, 0.3).se is None


def test_the_within_session_se_from_sums_equals_the_one_from_per_session_influences():
    from council_db.analysis.stats.correlation import WithinSums, session_moments, within_session_correlation_from_sums

    rng = np.random.default_rng(3)
    session = np.repeat(np.arange(60), 4)
    x = rng.normal(7, 0.5, len(session))
    y = 0.4 * x + rng.normal(0, 1, len(session)) + rng.normal(0, 2, 60)[session]
    moments = session_moments(session, x, y)
    estimate = within_session_correlation_from_sums(WithinSums.of(moments))

    a, b, c = moments.sxy.sum(), moments.sxx.sum(), moments.syy.sum()
    r = a / np.sqrt(b * c)
    influence = moments.sxy / np.sqrt(b * c) - 0.5 * r * (moments.sxx / b + moments.syy / c)
    assert estimate.estimate == pytest.approx(r)
    assert estimate.se == pytest.approx(np.sqrt(60 / 59 * influence @ influence), rel=1e-9)
    assert estimate.ci_low < r < estimate.ci_high
