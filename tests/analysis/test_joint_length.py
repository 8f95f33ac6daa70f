"""The joint model's length effect per reviewer (issue 33): each reviewer's own points per log
length, recovered where planted; a judge's own length preference no longer read as its
self-preference; the panel's length (the common slope) the unweighted mean of the reviewers'
own slopes; a reviewer whose answers' lengths do not vary within its sessions named not
identified and taken at the panel's slope, its records informing that slope (a panel of such
reviewers gets one slope for the panel, as before the per-reviewer slopes); and the
per-reviewer terms identified within pairwise verdicts' (session, reviewer) groups too."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import from_records, from_rows, log_length_sd
from council_db.simulate import SimulationConfig, write_jsonl

MODELS = ["openai/gpt-4o", "anthropic/claude-3-5-sonnet", "google/gemini-1.5-pro", "meta-llama/llama-3.1-70b"]
OWN_VERBOSITY = [0.8, 0.3, -0.3, -0.8]  # points per SD of log length, each judge its own
QUALITY = [1.0, 0.3, -0.3, -1.0]  # with length_quality_corr=1: gpt-4o writes longest, llama shortest


def simulate(**settings):
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(models=MODELS, **settings), out)
    return from_records(json.loads(line) for line in out.getvalue().splitlines()), truth


def covers(effect: joint_model.Effect, value: float) -> bool:
    return effect.ci_low <= value <= effect.ci_high


def test_a_length_effect_planted_per_reviewer_is_recovered_per_reviewer_with_coverage():
    covered, errors = 0, []
    for seed in range(12):
        data, truth = simulate(sessions=60, seed=seed, reviewer_verbosity=dict(zip(MODELS, OWN_VERBOSITY)))
        fit = joint_model.fit(data)
        for name, per_sd in zip(MODELS, OWN_VERBOSITY):
            effect, planted = fit.length_by_reviewer[name], per_sd / truth["log_length_sd"]
            covered += covers(effect, planted)
            errors.append((effect.estimate - planted) / effect.se)
    assert covered >= 43  # of 48 intervals (95%: 45.6 expected; 43 or more with probability 0.96)
    assert abs(np.mean(errors)) < 0.4 and 0.7 < np.std(errors) < 1.3  # unbiased, SEs honest


def test_a_judges_own_length_preference_is_not_read_as_self_preference():
    # Each judge's own model writes the answers its length preference favours (the longest
    # writer likes length most): with one length effect for the panel, its scores of its own
    # answers rose like a self-preference, +0.38 [+0.25, +0.50] here though none is planted.
    data, _ = simulate(sessions=120, seed=3, model_quality=dict(zip(MODELS, QUALITY)), length_quality_corr=1.0,
                       reviewer_verbosity=dict(zip(MODELS, OWN_VERBOSITY)))
    fit = joint_model.fit(data)
    assert covers(fit.self_preference, 0.0), fit.self_preference
    assert all(covers(fit.self_preference_by_reviewer[name], 0.0) for name in MODELS)


def test_the_panels_length_is_the_unweighted_mean_of_the_reviewers_terms():
    data, _ = simulate(sessions=80, seed=5, verbosity=0.3, reviewer_verbosity=dict(zip(MODELS, OWN_VERBOSITY)))
    fit = joint_model.fit(data)
    terms = [fit.length_by_reviewer[name] for name in MODELS]
    assert fit.length_per_log.estimate == pytest.approx(np.mean([t.estimate for t in terms]), abs=1e-12)
    assert max(t.se for t in terms) > fit.length_per_log.se > 0  # a mean of four: tighter than its terms
    sd = log_length_sd(data)
    assert fit.length_per_sd.estimate == pytest.approx(fit.length_per_log.estimate * sd)
    assert fit.length_per_sd.ci_low == pytest.approx(fit.length_per_log.ci_low * sd)


def test_a_reviewer_whose_answers_lengths_do_not_vary_within_its_sessions_is_named_not_identified():
    rng = np.random.default_rng(4)
    rows = []
    for s in range(80):
        lengths = {m: int(rng.integers(300, 3000)) for m in ("a", "b", "c")}
        order = rng.permutation(3)
        for reviewer in ("r1", "r2", "solo"):
            for slot, model in enumerate(np.array(["a", "b", "c"])[order].tolist()):
                if reviewer == "solo" and model != "a":
                    continue  # it scores one answer a session: no longer or shorter answer to compare
                bonus = 0.5 * np.log(lengths[model]) * (reviewer == "r1")
                rows.append((f"s{s:03d}", s, reviewer, model, slot, lengths[model],
                             round(6.0 + bonus + rng.normal(), 1)))
    fit = joint_model.fit(from_rows(rows))
    assert "solo" not in fit.length_by_reviewer
    assert ("length effect of solo (its answers' lengths do not vary within its sessions; taken at the panel's "
            "slope)") in fit.not_identified
    assert any("length effect of solo" in warning for warning in fit.warnings)
    assert set(fit.length_by_reviewer) == {"r1", "r2"}
    mean = np.mean([fit.length_by_reviewer[name].estimate for name in ("r1", "r2")])
    assert fit.length_per_log.estimate == pytest.approx(mean, abs=1e-12)  # the common slope: the mean of theirs
    assert covers(fit.length_by_reviewer["r1"], 0.5) and covers(fit.length_by_reviewer["r2"], 0.0)


def test_pairwise_verdicts_identify_each_reviewers_length_within_its_own_calls():
    out = io.StringIO()
    write_jsonl(SimulationConfig(sessions=120, seed=2, reviewers=["judge-a", "judge-b", "judge-c"],
                                 candidates_per_session=2, swap_orders=True, pairwise=True,
                                 per_reviewer_shuffle=True, reviewer_verbosity={"judge-a": 1.5}), out)
    fit = joint_model.fit(from_records(json.loads(line) for line in out.getvalue().splitlines()))
    assert fit.fixed_totals is not None and not any(e.identified for e in fit.severity.values())
    by_reviewer = fit.length_by_reviewer
    assert set(by_reviewer) == {"judge-a", "judge-b", "judge-c"}
    assert by_reviewer["judge-a"].ci_low > 0  # its longer answer wins its calls; the others' do not
    assert by_reviewer["judge-b"].ci_low < 0 < by_reviewer["judge-b"].ci_high
    assert by_reviewer["judge-c"].ci_low < 0 < by_reviewer["judge-c"].ci_high
    mean = np.mean([e.estimate for e in by_reviewer.values()])
    assert fit.length_per_log.estimate == pytest.approx(mean, abs=1e-12)


# --------------------------------------------------------------------------- sparse panels


def _panel_rows(seed: int, sessions: int, rich: int, sparse: int, slope: float) -> list[tuple]:
    """Sessions of three answers (a, b, c, lengths and display order drawn at random); ``rich``
    reviewers score all three, and three of ``sparse`` reviewers (drawn anew each session) one answer each:
    score 6 + quality + severity + slope * log length + noise."""
    rng = np.random.default_rng(seed)
    quality = {"a": 0.5, "b": 0.0, "c": -0.5}
    severity = rng.normal(0.0, 0.3, rich + sparse)
    rows = []
    for s in range(sessions):
        lengths = {m: int(rng.integers(200, 3000)) for m in quality}
        slot = dict(zip(quality, rng.permutation(3).tolist()))  # the session's display order
        scorers = [(r, m) for r in range(rich) for m in quality]
        scorers += list(zip((rich + rng.choice(sparse, 3, replace=False)).tolist(), quality))
        for r, m in scorers:
            score = 6.0 + quality[m] + severity[r] + slope * np.log(lengths[m]) + rng.normal(0.0, 0.7)
            rows.append((f"s{s:03d}", s, f"judge-{r:02d}", m, slot[m], lengths[m], round(score, 1)))
    return rows


def _least_squares_length(data, deviations: list[str]) -> tuple[float, np.ndarray]:
    """The common log-length slope of an explicit OLS: session, reviewer and model dummies, slot
    effects, log length on every record, and each named reviewer's deviation from the common
    slope (the last named one's minus the others'), on log length centred within the session.
    Also its residuals."""
    dummies = lambda codes, k: (codes[:, None] == np.arange(k)).astype(float)  # noqa: E731
    session_mean = np.bincount(data.session, weights=data.log_length) / np.bincount(data.session)
    centred = data.log_length - session_mean[data.session]
    named = [data.reviewers.index(name) for name in deviations]
    deviation = np.zeros((data.n_records, max(len(named) - 1, 0)))
    for column, r in enumerate(named[:-1]):
        deviation[:, column] = centred * (data.reviewer == r)
    if len(named) > 1:
        deviation -= (centred * (data.reviewer == named[-1]))[:, None]
    x = np.column_stack([dummies(data.session, data.n_sessions), dummies(data.reviewer, len(data.reviewers))[:, 1:],
                         dummies(data.model, 3)[:, 1:], dummies(data.slot, 3)[:, 1:], data.log_length, deviation])
    beta, *_ = np.linalg.lstsq(x, data.score, rcond=None)
    return float(beta[-1 - deviation.shape[1]]), data.score - x @ beta


def test_a_panel_of_judges_each_scoring_one_answer_a_session_gets_one_slope_for_the_panel():
    # Before the common slope: no reviewer had a length term, and the panel had no length figure.
    data = from_rows(_panel_rows(seed=1, sessions=60, rich=0, sparse=12, slope=0.4))
    fit = joint_model.fit(data)
    assert fit.length_by_reviewer == {} and fit.not_identified == [
        "length effect of 12 reviewers (judge-00, judge-01, judge-02, judge-03, judge-04 and 7 more: their answers' "
        "lengths do not vary within their sessions; taken at the panel's slope)"]
    expected, residuals = _least_squares_length(data, [])  # one slope for the panel, as before issue 33
    assert fit.length_per_log.estimate == pytest.approx(expected, abs=1e-9)
    assert np.allclose(fit.residuals, residuals, atol=1e-9)
    assert covers(fit.length_per_log, 0.4)


def test_in_a_mixed_panel_the_sparse_reviewers_records_inform_the_common_slope():
    rows = _panel_rows(seed=2, sessions=40, rich=2, sparse=30, slope=0.4)
    data = from_rows(rows)
    fit = joint_model.fit(data)
    assert set(fit.length_by_reviewer) == {"judge-00", "judge-01"}
    expected, residuals = _least_squares_length(data, ["judge-00", "judge-01"])
    assert fit.length_per_log.estimate == pytest.approx(expected, abs=1e-9)
    assert np.allclose(fit.residuals, residuals, atol=1e-9)
    mean = np.mean([e.estimate for e in fit.length_by_reviewer.values()])
    assert fit.length_per_log.estimate == pytest.approx(mean, abs=1e-12)  # the two's slopes: common +- deviation
    rich_only = joint_model.fit(from_rows([row for row in rows if row[2] in ("judge-00", "judge-01")]))
    assert abs(fit.length_per_log.estimate - rich_only.length_per_log.estimate) > 1e-3  # their records move it
    assert fit.length_per_log.se < 0.9 * rich_only.length_per_log.se  # and add to what it rests on
    assert covers(fit.length_per_log, 0.4)
