"""The joint model finds planted reviewer severity, position, self-preference, length and quality
effects at their planted size, is not fooled where raw means are, and warns (never raises)
where the design cannot identify an effect."""

from __future__ import annotations

import io
import json
import math
from dataclasses import astuple
from datetime import datetime, timezone

import numpy as np
import pytest

from council_db.analysis.joint import joint_model, least_squares
from council_db.analysis.loading.score_data import ScoreData, from_records, from_rows
from council_db.analysis.stats.inference import t_quantile
from council_db.simulate import SimulationConfig, write_jsonl

MODELS = ["openai/gpt-4o", "anthropic/claude-3-5-sonnet", "google/gemini-1.5-pro", "meta-llama/llama-3.1-70b"]
OFFSETS = [-0.8, 0.0, 0.6, 0.2]
POSITIONS = [0.3, 0.0, -0.1, 0.1]
QUALITY = [1.0, 0.4, -0.3, -1.1]
END = datetime(2025, 12, 17, tzinfo=timezone.utc)


def simulate(**settings) -> tuple[ScoreData, dict]:
    settings.setdefault("end", END)
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(**settings), out)
    return from_records(json.loads(line) for line in out.getvalue().splitlines()), truth


def centred(values) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return values - values.mean()


def covers(effect: joint_model.Effect, value: float) -> bool:
    return effect.ci_low <= value <= effect.ci_high


def same_sign(effect: joint_model.Effect, value: float) -> bool:
    """The right sign, for planted values clearly away from zero."""
    return abs(value) < 0.1 or np.sign(effect.estimate) == np.sign(value)


@pytest.fixture(scope="module")
def planted():
    """Every effect planted at once, with longer answers coming from better models."""
    data, truth = simulate(
        sessions=400, seed=17, models=MODELS, reviewer_offsets=dict(zip(MODELS, OFFSETS)),
        position_effects=POSITIONS, self_preference=0.5, verbosity=0.3, length_quality_corr=0.8,
        model_quality=dict(zip(MODELS, QUALITY)),
    )
    return data, truth, joint_model.fit(data)


# --------------------------------------------------------------------------- recovery


def test_reviewer_severity_is_recovered_relative_to_the_average_reviewer(planted):
    data, truth, fit = planted
    for name, value in zip(MODELS, centred(OFFSETS)):
        effect = fit.severity[name]
        assert same_sign(effect, value), (name, effect)
        assert covers(effect, value), (name, effect, value)
    assert fit.severity[MODELS[0]].estimate < 0 and fit.severity[MODELS[0]].p_value < 1e-6  # harsh
    assert sum(effect.estimate for effect in fit.severity.values()) == pytest.approx(0.0, abs=1e-9)


def test_position_effects_are_recovered_relative_to_the_average_slot(planted):
    _, _, fit = planted
    assert sorted(fit.slot_effects) == [0, 1, 2, 3]
    for slot, value in enumerate(centred(POSITIONS)):
        effect = fit.slot_effects[slot]
        assert same_sign(effect, value) and covers(effect, value), (slot, effect, value)
    test = fit.position_test
    # HTZ's df2 (Pustejovsky & Tipton 2018): a little below G - 1 = 399 with 400 sessions
    assert test is not None and test.df1 == 3 and 380 <= test.df2 <= fit.df == 399
    assert test.p_value < 1e-6
    statistic, df1, df2, p_value = test  # unpacks like a tuple (the report layer relies on it)
    assert (df1, df2) == (3, test.df2)


def test_self_preference_is_recovered_pooled_and_per_reviewer(planted):
    _, _, fit = planted
    assert fit.self_preference.estimate > 0 and covers(fit.self_preference, 0.5)
    assert fit.self_preference.p_value < 1e-6
    assert set(fit.self_preference_by_reviewer) == set(MODELS)
    for name, effect in fit.self_preference_by_reviewer.items():
        assert covers(effect, 0.5), (name, effect)
    mean = np.mean([e.estimate for e in fit.self_preference_by_reviewer.values()])
    assert fit.self_preference.estimate == pytest.approx(mean)
    # the pooled SE is smaller than any single reviewer's
    assert fit.self_preference.se < min(e.se for e in fit.self_preference_by_reviewer.values())


def test_length_effect_is_recovered_within_model_per_log_unit_and_per_sd(planted):
    data, truth, fit = planted
    per_log = truth["verbosity"] / truth["log_length_sd"]
    assert fit.length_per_log.estimate > 0 and covers(fit.length_per_log, per_log)
    sd = float(np.std(data.log_length, ddof=1))
    assert fit.length_per_sd.estimate == pytest.approx(fit.length_per_log.estimate * sd)
    assert fit.length_per_sd.ci_high == pytest.approx(fit.length_per_log.ci_high * sd)
    assert fit.length_per_sd.p_value == fit.length_per_log.p_value
    assert covers(fit.length_per_sd, truth["verbosity"] * sd / truth["log_length_sd"])


def test_candidate_quality_is_recovered_despite_the_length_quality_confound(planted):
    _, truth, fit = planted
    assert truth["length_quality_corr"] == 0.8
    for name, value in zip(MODELS, centred(QUALITY)):
        effect = fit.quality[name]
        assert same_sign(effect, value) and covers(effect, value), (name, effect, value)


def test_fit_is_clean_and_reports_sizes_and_residuals(planted):
    data, _, fit = planted
    assert fit.warnings == [] and fit.not_identified == []
    assert fit.n_sessions == 400 and fit.n_records == data.n_records and fit.df == 399
    assert fit.residuals.shape == (data.n_records,) and np.isfinite(fit.residuals).all()
    assert abs(np.bincount(data.session, weights=fit.residuals)).max() < 1e-8  # within-session residuals
    for name, sd in fit.residual_sd_by_reviewer.items():
        assert sd == pytest.approx(1.0, abs=0.06), name  # noise_sd = 1 (plus rounding to 0.1)
    assert len(fit.groups) == 1


# --------------------------------------------------------------------------- confounds


def test_naive_length_slope_is_fooled_by_longer_better_models_but_the_joint_model_is_not():
    data, truth = simulate(sessions=300, seed=5, models=MODELS, model_quality=dict(zip(MODELS, QUALITY)),
                           length_quality_corr=0.8, verbosity=0.0)
    naive_slope = np.polyfit(data.log_length, data.score, 1)[0]  # score on log length, all records
    fit = joint_model.fit(data)
    assert naive_slope > 0.3  # "length is rewarded"
    assert covers(fit.length_per_log, 0.0)
    assert abs(fit.length_per_log.estimate) < 0.15
    assert not covers(fit.length_per_log, naive_slope)


def test_raw_model_means_mix_length_into_quality_but_the_joint_model_does_not():
    data, truth = simulate(sessions=300, seed=6, models=MODELS, model_quality=dict(zip(MODELS, QUALITY)),
                           length_quality_corr=0.8, verbosity=0.5)
    raw = np.array([data.score[data.model == data.models.index(m)].mean() for m in MODELS])
    true = centred(QUALITY)
    raw_error = np.abs(centred(raw) - true).max()
    fit = joint_model.fit(data)
    assert raw_error > 0.2  # raw means credit the long writers with their verbosity
    for name, value in zip(MODELS, true):
        assert covers(fit.quality[name], value), name


def test_reviewer_that_never_reviews_itself_looks_harsh_raw_but_not_in_the_joint_model():
    judge = "independent/judge"
    data, _ = simulate(sessions=300, seed=17, models=MODELS, reviewers=MODELS + [judge], self_preference=0.8,
                       model_quality=dict(zip(MODELS, QUALITY)))
    raw = np.array([data.score[data.reviewer == i].mean() for i in range(len(data.reviewers))])
    judge_raw = raw[data.reviewers.index(judge)] - raw.mean()
    fit = joint_model.fit(data)
    assert judge_raw < -0.12  # the judge looks harsh: it never gets to score "itself"
    for name, effect in fit.severity.items():
        assert covers(effect, 0.0), (name, effect)
    assert covers(fit.self_preference, 0.8)
    assert judge not in fit.self_preference_by_reviewer


def test_null_data_gives_no_small_p_values():
    data, _ = simulate(sessions=300, seed=21, models=MODELS)
    fit = joint_model.fit(data)
    effects = [*fit.severity.values(), *fit.quality.values(), *fit.slot_effects.values(),
               *fit.self_preference_by_reviewer.values(), fit.self_preference, fit.length_per_log]
    assert len(effects) == 18
    assert min(e.p_value for e in effects) > 0.001
    assert fit.position_test.p_value > 0.001
    assert fit.warnings == []


# --------------------------------------------------------------------------- exact algebra


def test_matches_least_squares_with_explicit_session_dummies_and_cr2_with_bell_mccaffrey_df():
    data, _ = simulate(sessions=40, seed=3, models=MODELS, reviewer_offsets=dict(zip(MODELS, OFFSETS)),
                       position_effects=POSITIONS[:3], self_preference=0.5, verbosity=0.3, candidates_per_session=3)
    fit = joint_model.fit(data)
    n, g = data.n_records, data.n_sessions
    dummies = lambda codes, k: (codes[:, None] == np.arange(k)).astype(float)  # noqa: E731
    slot = dummies(data.slot, 3)
    slot_effect = slot[:, :2] - slot[:, [2]]  # sum-to-zero over slots 0, 1, 2
    self_cols = np.column_stack([data.self_review & (data.reviewer == r) for r in range(4)]).astype(float)
    session_mean = np.bincount(data.session, weights=data.log_length) / np.bincount(data.session)
    length_cols = (data.log_length - session_mean[data.session])[:, None] * dummies(data.reviewer, 4)
    slopes = np.column_stack([dummies(data.reviewer, 4)[:, 1:], dummies(data.model, 4)[:, 1:], slot_effect,
                              self_cols, length_cols])
    x = np.column_stack([dummies(data.session, g), slopes])
    beta, *_ = np.linalg.lstsq(x, data.score, rcond=None)
    e = data.score - x @ beta
    b = beta[g:]
    reviewer = np.concatenate([[0.0], b[:3]])
    assert [fit.severity[m].estimate for m in data.reviewers] == pytest.approx(centred(reviewer), abs=1e-9)
    model = np.concatenate([[0.0], b[3:6]])
    assert [fit.quality[m].estimate for m in data.models] == pytest.approx(centred(model), abs=1e-9)
    assert [fit.slot_effects[s].estimate for s in range(3)] == pytest.approx([b[6], b[7], -b[6] - b[7]], abs=1e-9)
    assert [fit.length_by_reviewer[m].estimate for m in data.reviewers] == pytest.approx(b[-4:], abs=1e-9)
    assert fit.length_per_log.estimate == pytest.approx(b[-4:].mean(), abs=1e-9)
    assert np.allclose(fit.residuals, e, atol=1e-9)
    # CR2 by hand on the full model, session dummies and all (Pustejovsky & Tipton 2018: the
    # adjustment uses the full hat matrix, pseudo-inverse square root where a session's
    # dummy makes I - H_gg singular), and Bell-McCaffrey's df from the N x G matrix
    hat = x @ np.linalg.pinv(x)
    bread = np.linalg.pinv(x.T @ x)
    adjust = []
    for s in range(g):
        rows = np.flatnonzero(data.session == s)
        values, vectors = np.linalg.eigh(np.eye(len(rows)) - hat[np.ix_(rows, rows)])
        root = np.where(values > 1e-10, 1.0 / np.sqrt(np.maximum(values, 1e-10)), 0.0)
        adjust.append((rows, (vectors * root) @ vectors.T))
    u = np.vstack([x[rows].T @ a @ e[rows] for rows, a in adjust])
    cov = (bread @ u.T @ u @ bread)[g:, g:]
    pooled = np.zeros(slopes.shape[1])
    pooled[-4:] = 0.25  # the mean of the reviewers' length terms
    assert fit.length_per_log.se == pytest.approx(math.sqrt(pooled @ cov @ pooled), rel=1e-8)
    contrast = np.zeros(slopes.shape[1])
    contrast[[0, 1, 2]] = [-0.25, -0.25, 0.75]  # reviewer 3 minus the average reviewer
    severity = fit.severity[data.reviewers[3]]
    assert severity.se == pytest.approx(math.sqrt(contrast @ cov @ contrast), rel=1e-8)
    full = np.concatenate([np.zeros(g), contrast])
    columns = []
    for rows, a in adjust:
        column = np.zeros(n)
        column[rows] = a @ x[rows] @ bread @ full
        columns.append(column - hat @ column)
    grams = np.array(columns) @ np.array(columns).T
    df = np.trace(grams) ** 2 / np.sum(grams * grams)
    half = severity.ci_high - severity.estimate
    assert half == pytest.approx(t_quantile(0.95, df) * severity.se, rel=1e-8)
    assert 20 < df < g - 1  # fewer than G - 1: the t interval is wider than CR1's on G - 1
    assert fit.df == g - 1


def test_qr_fallback_gives_the_same_fit(monkeypatch):
    data, _ = simulate(sessions=60, seed=4, models=MODELS, reviewer_offsets=dict(zip(MODELS, OFFSETS)),
                       position_effects=POSITIONS, self_preference=0.5, verbosity=0.3)
    fast = joint_model.fit(data)
    monkeypatch.setattr(least_squares, "_COND_LIMIT", 0.0)  # every design counts as ill conditioned
    careful = joint_model.fit(data)
    for name in MODELS:
        assert careful.severity[name].estimate == pytest.approx(fast.severity[name].estimate, abs=1e-10)
        assert careful.quality[name].se == pytest.approx(fast.quality[name].se, rel=1e-9)
    assert careful.length_per_log.estimate == pytest.approx(fast.length_per_log.estimate, abs=1e-10)
    assert np.allclose(careful.residuals, fast.residuals, atol=1e-10)


# --------------------------------------------------------------------------- identification warnings


def warned(fit, *words) -> bool:
    return any(all(word in warning for word in words) for warning in fit.warnings)


def test_warns_when_no_reviewer_reviews_itself():
    data, _ = simulate(sessions=200, seed=8, models=MODELS, reviewers=["judge/a", "judge/b", "judge/c"],
                       reviewer_offsets={"judge/a": -0.5})
    fit = joint_model.fit(data)
    assert warned(fit, "no self-reviews", "self-preference")
    assert fit.self_preference is None and fit.self_preference_by_reviewer == {}
    assert covers(fit.severity["judge/a"], -0.5 - (-0.5 / 3))


def test_warns_without_display_slots_and_still_fits_the_rest():
    data, _ = simulate(sessions=200, seed=9, models=MODELS, schema_version="1.1.0", self_preference=0.5,
                       reviewer_offsets=dict(zip(MODELS, OFFSETS)), position_effects=POSITIONS)
    assert (data.slot == -1).all()
    fit = joint_model.fit(data)
    assert warned(fit, "no display-order records")
    assert fit.slot_effects == {} and fit.position_test is None
    assert covers(fit.self_preference, 0.5)
    for name, value in zip(MODELS, centred(OFFSETS)):
        assert covers(fit.severity[name], value)


def _rows(sessions, reviewers, slot_of, seed=0, score=None):
    """Hand-built rows: every reviewer in ``reviewers(s)`` scores every model ``slot_of(s)`` shows."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(sessions):
        shown = slot_of(s, rng)  # model -> slot
        lengths = {m: int(rng.integers(300, 3000)) for m in shown}
        for reviewer in reviewers(s):
            for model, slot in shown.items():
                value = 6.0 + rng.normal() + (score(reviewer, model, slot) if score else 0.0)
                rows.append((f"s{s:04d}", s, reviewer, model, slot, lengths[model], round(value, 1)))
    return rows


def test_warns_and_refuses_to_separate_a_model_always_shown_in_the_same_slot():
    def slots(s, rng):
        rest = rng.permutation(["b", "c", "d"])
        return {"a": 0, rest[0]: 1, rest[1]: 2, rest[2]: 3}

    data = from_rows(_rows(120, lambda s: ["a", "b", "c", "d"], slots,
                           score=lambda r, m, p: -0.5 * (r == "b")))
    fit = joint_model.fit(data)
    assert warned(fit, "candidate a", "always shown in display slot 0")
    assert not fit.quality["a"].identified and not fit.slot_effects[0].identified
    assert "quality of a" in fit.not_identified and "display slot 0 effect" in fit.not_identified
    assert warned(fit, "not identified", "quality of a", "display slot 0 effect")
    # what the design can tell is still told
    assert covers(fit.severity["b"], -0.5 + 0.125) and fit.length_per_log is not None
    assert fit.position_test is not None and fit.position_test.df1 == 2  # slots 1..3 against each other


def test_warns_when_reviewers_and_candidates_fall_apart_into_groups():
    def slots(s, rng):
        models = ["m1", "m2"] if s % 2 == 0 else ["m3", "m4"]
        order = rng.permutation(2)
        return {models[0]: int(order[0]), models[1]: int(order[1])}

    def reviewers(s):
        return ["r1", "r2"] if s % 2 == 0 else ["r3", "r4"]

    data = from_rows(_rows(200, reviewers, slots, seed=2, score=lambda r, m, p: {"r1": -0.6, "r3": 1.0}.get(r, 0)))
    fit = joint_model.fit(data)
    assert warned(fit, "not connected", "2 separate groups", "r1, r2", "m3, m4")
    assert fit.groups == [(["r1", "r2"], ["m1", "m2"]), (["r3", "r4"], ["m3", "m4"])]
    # severities are relative to the average reviewer of the group
    assert covers(fit.severity["r1"], -0.3) and covers(fit.severity["r2"], 0.3)
    assert covers(fit.severity["r3"], 0.5) and covers(fit.severity["r4"], -0.5)
    assert all(effect.identified for effect in fit.quality.values())


def test_groups_that_share_sessions_are_still_kept_apart():
    def slots(s, rng):
        order = rng.permutation(4)
        return dict(zip(["m1", "m2", "m3", "m4"], order.tolist()))

    rows = [row for row in _rows(150, lambda s: ["r1", "r2", "r3", "r4"], slots, seed=3,
                                 score=lambda r, m, p: 0.4 * (r == "r2") + 2.0 * (m in ("m3", "m4")))
            if (row[2] in ("r1", "r2")) == (row[3] in ("m1", "m2"))]
    fit = joint_model.fit(from_rows(rows))
    assert warned(fit, "2 separate groups")
    assert covers(fit.severity["r2"], 0.2) and covers(fit.quality["m3"], 0.0)


def test_reviewer_that_only_scores_itself_loses_its_self_term_not_the_fit():
    def slots(s, rng):
        return dict(zip("abcd", rng.permutation(4).tolist()))

    rows = [row for row in _rows(150, lambda s: list("abcd"), slots, seed=4,
                                 score=lambda r, m, p: 0.5 * (r == m) - 0.6 * (r == "a"))
            if row[2] != "d" or row[3] == "d"]  # reviewer d scores only its own model
    fit = joint_model.fit(from_rows(rows))
    assert "self-preference of d" in fit.not_identified
    assert warned(fit, "not identified", "self-preference of d")
    assert not fit.self_preference_by_reviewer["d"].identified
    assert all(effect.identified for effect in fit.severity.values())
    assert covers(fit.self_preference, 0.5)  # the mean of a, b and c's terms
    assert covers(fit.self_preference_by_reviewer["a"], 0.5)


# --------------------------------------------------------------------------- thin data


@pytest.mark.parametrize("rows", [
    [],
    [("s1", 1, "a", "b", 0, 100, 5.0)],
    [("s1", 1, "a", "b", 0, 100, 5.0), ("s1", 1, "a", "c", 1, 200, 6.0)],
    [("s1", 1, "a", "b", 0, 100, 5.0), ("s2", 2, "a", "c", 1, 200, 6.0)],
    [("s1", 1, "a", "a", 0, 100, 5.0), ("s1", 1, "b", "a", 0, 100, 6.0),
     ("s2", 2, "a", "b", 0, 200, 6.0), ("s2", 2, "b", "b", 0, 200, 7.0)],
    [(f"s{s}", s, "a", m, i, 100 * (i + 1), 5.0 + i) for s in range(3) for i, m in enumerate("bcd")],
], ids=["empty", "one-record", "one-session", "singleton-sessions", "two-sessions", "three-sessions"])
def test_tiny_data_gives_warnings_not_exceptions(rows):
    data = from_rows(rows)
    fit = joint_model.fit(data)
    assert fit.warnings
    assert fit.residuals.shape == (data.n_records,)
    for effect in [*fit.severity.values(), *fit.quality.values(), *fit.slot_effects.values()]:
        assert isinstance(effect, joint_model.Effect)


def test_singleton_sessions_are_left_out_with_nan_residuals():
    data, _ = simulate(sessions=60, seed=12, models=MODELS, reviewer_offsets=dict(zip(MODELS, OFFSETS)))
    lonely = ("lonely", None, MODELS[0], MODELS[1], 0, 1000, 9.0)
    rows = [(data.session_keys[s], None, data.reviewers[r], data.models[m], int(p), int(round(math.expm1(ln))), y)
            for s, r, m, p, ln, y in zip(data.session, data.reviewer, data.model, data.slot, data.log_length,
                                         data.score)]
    both = from_rows([lonely, *rows])
    fit, alone = joint_model.fit(both), joint_model.fit(from_rows(rows))
    assert np.isnan(fit.residuals[0]) and np.isfinite(fit.residuals[1:]).all()
    assert fit.n_sessions == 60 and fit.n_records == data.n_records
    assert fit.severity[MODELS[0]] == alone.severity[MODELS[0]]


def test_effects_over_arrays_are_each_effect_alone():
    """A fit's effects take their t tails and quantiles over arrays (``effects_of``): each the
    one-at-a-time ``effect_of``'s, on 33+ elements (the array kernels) and on a few (the float
    kernel), a zero variance giving no p-value and a zero-width interval."""
    rng = np.random.default_rng(3)
    for n in (40, 5):
        estimates, variances = rng.standard_normal(n), rng.uniform(0.0, 0.2, n)
        variances[0] = 0.0
        dfs = rng.uniform(2.0, 900.0, n)
        found = least_squares.effects_of(estimates, variances, dfs)
        for effect, alone in zip(found, map(least_squares.effect_of, estimates, variances, dfs)):
            np.testing.assert_allclose(astuple(effect), astuple(alone), rtol=1e-12, equal_nan=True)
        assert math.isnan(found[0].p_value) and found[0].ci_low == found[0].ci_high == estimates[0]
