"""The leaderboard's ``quality`` method: the joint model's candidate quality, the same
estimate (and 95% CI) the bias report shows, with reviewer severity, display slot,
self-preference and answer length (within model) fitted at once and so removed.

Rank intervals come from the quality CIs themselves, so the two cannot disagree: a model's
rank can be no better than 1 + the number of models whose CI lies wholly above its own, and
no worse than the number of models minus those whose CI lies wholly below. Refitting the
joint model on thousands of session resamples would cost seconds per run for the same
message; non-overlapping 95% CIs are a conservative test of a difference, so the intervals
are, if anything, wide.
"""

from __future__ import annotations

import math

import numpy as np

from council_db.analysis.aggregation.leaderboard import Standing
from council_db.analysis.aggregation.strategies import Method
from council_db.analysis.joint.joint_model import JointFit
from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.stats import Estimate, answer_index

METHOD = "joint model (session fixed effects), cluster-robust by session, t with G-1 df"
FOLLOWS = 0.8  # Spearman between a method's model scores and the models' mean log length
INTERVAL = "95% t intervals of the joint model (cluster-robust by session, as in the bias report); ranks: from " \
           "those CIs (a rank interval spans every model whose CI overlaps its own)"


def quality_standings(data: ScoreData, fit: JointFit) -> list[Standing]:
    """Models by joint-model quality, best first; a model without an identified quality ranks last."""
    _, first = answer_index(data.session, data.model, data.log_length)
    answers = np.bincount(data.model[first], minlength=len(data.models))
    effects = dict(fit.quality)
    known = [name for name, effect in effects.items() if effect.identified]
    order = sorted(known, key=lambda name: -effects[name].estimate) + sorted(set(effects) - set(known))
    standings = []
    for place, name in enumerate(order, start=1):
        effect, number = effects[name], data.models.index(name)
        mine = data.model == number
        n_sessions = len(np.unique(data.session[mine]))
        low, high = rank_interval(name, known, effects) if name in known else (None, None)
        standings.append(Standing(
            rank=place, model=name,
            score=Estimate(effect.estimate, effect.ci_low, effect.ci_high, se=effect.se, p_value=effect.p_value,
                           n_sessions=n_sessions, method=METHOD),
            rank_low=low, rank_high=high, n_sessions=n_sessions,
            n_answers=int(answers[number]), n_records=int(mine.sum())))
    return standings


def rank_interval(name: str, known: list[str], effects: dict) -> tuple[int, int]:
    mine = effects[name]
    if not (math.isfinite(mine.ci_low) and math.isfinite(mine.ci_high)):
        return 1, len(known)
    above = sum(effects[other].ci_low > mine.ci_high for other in known)
    below = sum(effects[other].ci_high < mine.ci_low for other in known)
    return 1 + above, len(known) - below


def length_warning(method: Method, standings: list[Standing], data: ScoreData, fit: JointFit) -> str | None:
    """Say so when a ranking follows answer length while the joint model finds a verbosity bias
    (its length effect, the figure of the report's verbosity line, at p <= 0.05) and quality
    ranks the models differently: the ranking then rewards long answers, not better ones."""
    effect = fit.length_per_sd
    scored = [s for s in standings if math.isfinite(s.score.estimate)]
    if method is Method.quality or effect is None or not effect.p_value <= 0.05 or len(scored) < 3:
        return None
    _, first = answer_index(data.session, data.model, data.log_length)
    first = first[~np.isnan(data.log_length[first])]  # answers of known length
    totals = np.bincount(data.model[first], weights=data.log_length[first], minlength=len(data.models))
    counts = np.bincount(data.model[first], minlength=len(data.models))
    lengths = [totals[data.models.index(s.model)] / counts[data.models.index(s.model)] for s in scored]
    rho = spearman([s.score.estimate for s in scored], lengths)
    known = [name for name, q in fit.quality.items() if q.identified]
    by_quality = sorted(known, key=lambda name: -fit.quality[name].estimate)
    if not rho * math.copysign(1.0, effect.estimate) >= FOLLOWS or [s.model for s in scored] == by_quality:
        return None
    return (f"the {method.value} ranking follows answer length (Spearman {rho:+.2f} between its scores and the "
            f"{len(scored)} models' mean log length), and the joint model finds a verbosity bias of "
            f"{effect.estimate:+.2f} points per SD of log length within model (95% CI {effect.ci_low:+.2f} to "
            f"{effect.ci_high:+.2f}, p {effect.p_value:.2g}): this order rewards long answers; --method quality "
            "(the default) removes length")


def spearman(x: list[float], y: list[float]) -> float:
    """Spearman's rho: Pearson's r of the ranks, ties given their average rank (as
    scipy.stats.spearmanr, whose import alone costs the leaderboard about a second)."""
    def ranks(values: list[float]) -> np.ndarray:
        _, inverse, counts = np.unique(np.asarray(values, dtype=float), return_inverse=True, return_counts=True)
        return (np.cumsum(counts) - (counts - 1) / 2.0)[inverse]

    rx, ry = ranks(x), ranks(y)
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])
