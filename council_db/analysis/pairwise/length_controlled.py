"""The length-controlled win rate against a baseline (Dubois et al. 2024, AlpacaEval 2.0).

Per candidate, over its games against the baseline: a logistic regression of its (fractional)
preference on an intercept and tanh(d / sd(d)), d the baseline's answer's characters minus the
candidate's, sd over those games (ddof 1): alpaca_eval's ``length_controlled_minimal`` GLM, the
one without the downloaded instruction-difficulty file. The LC win rate is the prediction at
d = 0, the logistic of the intercept: what the preference would be at equal length. Ties count
half, as alpaca_eval's preference 1.5 does.

alpaca_eval fits it with an L1 penalty (its LogisticRegression's C = 100) whose strength
``length_controlled_minimal`` then picks by 5-fold cross-validation. Here the penalty is
alpaca_eval's own without the cross-validation (its ``n_splits=0`` path): on a few dozen prompts
the cross-validated L1 zeroes the model's own term and says 50 whatever the data (on the 26
FuseChat prompts of tests/data/alpaca-eval it gives 50.00; this fit 51.54, alpaca_eval's
``n_splits=0`` 51.54), and on hundreds it picks a negligible penalty, where the two agree.
The CI resamples sessions. A warning, with alpaca_eval's rule, when LC moves far from the raw
win rate: below min(raw - raw/4, raw - 10) or above max(raw + (100 - raw)/4, raw + 10) points,
a sign the length model does not fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from council_db.analysis.pairwise.bradley_terry import RIDGE, Design, Fit, fit, resampled_params
from council_db.analysis.pairwise.games import Games
from council_db.analysis.pairwise.outcomes import QUASI_BINOMIAL
from council_db.analysis.stats import Estimate, clustered_mean, percentile_interval

ABS_CHANGE, REL_CHANGE = 10.0, 4.0  # alpaca_eval's get_is_extreme_changes
L1 = 1.0 / 100  # alpaca_eval's LogisticRegression(C=100, penalty="l1") without cross-validation
LQA_STEPS = 100


@dataclass(frozen=True)
class LengthControlled:
    model: str
    raw: Estimate  # win rate against the baseline, percent, ties half
    lc: Estimate  # length-controlled win rate, percent
    length: Estimate  # the coefficient of tanh(standardised length difference)
    games: int
    far_from_raw: bool


def length_controlled(games: Games, baseline: str, n_boot: int = 1000, seed: int = 0) -> list[LengthControlled]:
    """Each candidate's raw and length-controlled win rate against ``baseline``."""
    base = games.models.index(baseline)
    out = []
    for model in np.unique(np.concatenate([games.first, games.second])).tolist():
        if model == base:
            continue
        found = _against(games, model, base, n_boot, seed)
        if found is not None:
            out.append(found)
    return out


def _against(games: Games, model: int, base: int, n_boot: int, seed: int) -> LengthControlled | None:
    first = (games.first == model) & (games.second == base)
    second = (games.first == base) & (games.second == model)
    own = first | second
    preference = np.where(first, games.outcome, 1.0 - games.outcome)[own]
    chars = games.chars[own]
    difference = np.where(first[own], chars[:, 1] - chars[:, 0], chars[:, 0] - chars[:, 1])  # baseline - model
    known = np.isfinite(difference)
    if known.sum() < 3:
        return None
    preference, difference, session = preference[known], difference[known], games.session[own][known]
    sd = float(np.std(difference, ddof=1))
    feature = np.tanh(difference / sd) if sd > 0 else np.zeros(len(difference))
    result = _l1_fit(np.stack([np.ones(len(feature)), feature], axis=1), preference, session, model)
    samples = resampled_params(result, n_boot, seed)
    g = result.n_sessions
    raw = _percent(clustered_mean(preference, session))
    lc = _logistic_percent(result.params[0], samples[:, 0], g)
    length = _figure(result.params[1], samples[:, 1], g)
    return LengthControlled(games.models[model], raw, lc, length, int(len(preference)),
                            _far(raw.estimate, lc.estimate))


def _l1_fit(x: np.ndarray, preference: np.ndarray, session: np.ndarray, model: int) -> Fit:
    """alpaca_eval's fit without its cross-validation: the fractional logistic likelihood less
    L1 x (|intercept| + |slope|), L1 = 1/C with its C = 100, by local quadratic approximation
    (Fan & Li 2001: the penalty's |w| as w^2 / 2|w_k| around the last fit, refitted to a fixed
    point); the last quadratic stands in for the penalty in the resamples."""
    def fitted(penalty: np.ndarray) -> Fit:
        return fit(Design(x=x, weights=np.stack([1.0 - preference, preference], axis=1), session=session,
                          model=QUASI_BINOMIAL, candidates=np.array([model]), held=0,
                          slot_judges=np.zeros(0, np.int64), style_names=[], style_sd=np.ones(0), penalty=penalty))

    result = fitted(RIDGE * np.eye(2))
    for _ in range(LQA_STEPS):
        previous = result.params
        result = fitted(np.diag(L1 / np.maximum(np.abs(previous), 1e-8)))
        if np.abs(result.params - previous).max() < 1e-8:
            break
    return result


def _far(raw: float, lc: float) -> bool:
    """alpaca_eval's "very different from the raw one" rule, in percent."""
    too_small = lc < min(raw - raw / REL_CHANGE, raw - ABS_CHANGE)
    too_large = lc > max(raw + (100.0 - raw) / REL_CHANGE, raw + ABS_CHANGE)
    return bool(too_small or too_large)


def _percent(found: Estimate) -> Estimate:
    return Estimate(100 * found.estimate, 100 * max(found.ci_low, 0.0), 100 * min(found.ci_high, 1.0),
                    None if found.se is None else 100 * found.se, None, found.level, found.n_sessions, found.method)


def _figure(point: float, boot: np.ndarray, g: int) -> Estimate:
    low, high = percentile_interval(boot, n_sessions=g) if g >= 2 else (math.nan, math.nan)
    return Estimate(float(point), low, high, None, None, 0.95, g, "one-step session bootstrap, expanded percentile")


def _logistic_percent(point: float, boot: np.ndarray, g: int) -> Estimate:
    on_logit = _figure(point, boot, g)
    percent = lambda x: 100.0 / (1.0 + math.exp(-x)) if math.isfinite(x) else math.nan  # noqa: E731
    return Estimate(percent(on_logit.estimate), percent(on_logit.ci_low), percent(on_logit.ci_high), None, None,
                    0.95, g, on_logit.method)
