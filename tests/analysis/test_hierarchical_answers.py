"""The hierarchical model's answer effect: every reviewer of an answer sees the same answer,
so its own quality is shared by all its scores. Without that component the posterior of
everything compared between answers (length, slots shown to every reviewer at once) was too
narrow, 0.7-0.8 of the cluster-robust (CR2) standard error, and null windows were flagged;
with it the posterior SDs match CR2's, the spread is recovered, the weighted cross products
are the exact GLS ones, and the credible intervals have t tails on the residual df."""

from __future__ import annotations

import io
import json

import numpy as np

from council_db.analysis.hierarchical import hierarchical_model
from council_db.analysis.hierarchical.cross_products import cross_products, cumulative, strata
from council_db.analysis.hierarchical.terms import terms
from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import ScoreData, from_records
from council_db.analysis.stats.inference import t_quantile
from council_db.simulate import SimulationConfig, write_jsonl

MODELS = ["openai/gpt-4o", "anthropic/claude-3-5-sonnet", "google/gemini-1.5-pro", "meta-llama/llama-3.1-70b"]
QUALITY = dict(zip(MODELS, [0.8, 0.2, -0.3, -0.7]))


def simulate(**settings) -> ScoreData:
    out = io.StringIO()
    write_jsonl(SimulationConfig(models=MODELS, model_quality=QUALITY, **settings), out)
    return from_records(json.loads(line) for line in out.getvalue().splitlines())


def test_answer_quality_shared_by_every_reviewer_widens_the_between_answer_posteriors_to_cr2():
    ratios = []
    for seed in range(4):  # null windows: nothing planted but each answer's own quality (SD 0.7)
        data = simulate(sessions=30, seed=40 + seed, answer_sd=0.7)
        fit, joint = hierarchical_model.fit(data), joint_model.fit(data)
        ratios.append(fit.length_per_sd.sd / joint.length_per_sd.se)
        ratios.extend(fit.slot_effects[s].sd / joint.slot_effects[s].se for s in joint.slot_effects)
    assert 0.9 < float(np.median(ratios)) < 1.2, ratios  # without the answer effect: 0.7


def test_the_answer_spread_is_recovered_and_small_where_none_was_planted():
    planted = hierarchical_model.fit(simulate(sessions=30, seed=5, answer_sd=0.7))
    assert 0.5 < planted.spreads["answer"].sd < 0.9 and planted.spreads["answer"].n == 30 * 4
    none = hierarchical_model.fit(simulate(sessions=30, seed=5))
    assert none.spreads["answer"].sd < 0.3


def test_the_weighted_cross_products_are_the_exact_gls_ones_with_session_effects():
    data = simulate(sessions=6, seed=7, answer_sd=0.5)
    t = terms(data)
    rho = 0.6
    expected = np.zeros((t.q + t.p + 1,) * 2)
    for unit in np.unique(t.unit):  # per session: W' (V^-1 - V^-1 1 (1'V^-1 1)^-1 1'V^-1) W, V = I + rho A A'
        at = np.flatnonzero(t.unit == unit)
        w = t.design(int(at[0]), int(at[-1]) + 1)
        incidence = (t.answer[at][:, None] == np.unique(t.answer[at])[None, :]).astype(float)
        inverse = np.linalg.inv(np.eye(len(at)) + rho * incidence @ incidence.T)
        ones = inverse @ np.ones(len(at))
        expected += w.T @ (inverse - np.outer(ones, ones) / ones.sum()) @ w
    assert np.allclose(strata(t).weighted(rho), expected, atol=1e-9)
    assert np.allclose(cross_products(t, rho), expected, atol=1e-9)
    assert np.allclose(cumulative(t, [3, 6], rho)[-1], expected, atol=1e-9)


def test_a_panel_too_wide_to_keep_the_strata_at_every_cut_gets_the_same_fit(monkeypatch):
    from council_db.analysis.hierarchical import cross_products as passes

    data = simulate(sessions=12, seed=9, answer_sd=0.5)
    one_pass = hierarchical_model.fit(data)
    monkeypatch.setattr(passes, "SNAPSHOT_BYTES", 0)  # a second pass at the fitted rho instead
    two_passes = hierarchical_model.fit(data)
    assert abs(one_pass.length_per_sd.mean - two_passes.length_per_sd.mean) < 1e-9
    for name, path in one_pass.severity_paths.items():
        assert np.allclose(path.ci_high, two_passes.severity_paths[name].ci_high, atol=1e-9, equal_nan=True)


def test_credible_intervals_have_t_tails_on_the_residual_df():
    fit = hierarchical_model.fit(simulate(sessions=10, seed=8, answer_sd=0.5))
    length = fit.length_per_sd
    half = (length.ci_high - length.ci_low) / 2 / length.sd
    assert half > 1.99  # a normal posterior's is 1.96; 10 sessions leave some 25 df between answers
    assert half == t_quantile(0.95, fit.df)
