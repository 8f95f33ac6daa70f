"""The report's repeat stability (``self_consistency.stability``): each judge's figures from
analysis/effects/stability as Metrics (n, 95% CI, tier), and its least stable items named by
session and candidate. Figures, not tests: there is no null at which a judge's repeat noise is
a finding, so nothing here enters the flag family (``check --stability-min`` gates on it)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from council_db.analysis.effects.stability import JudgeStability as Found
from council_db.analysis.effects.stability import pass_threshold, repeat_stability
from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.stats.tiers import confidence_tier
from council_db.report.stability_model import JudgeStability, RepeatStability, UnstableItem


def _judge(found: Found, data: ScoreData, metric: Callable) -> JudgeStability:
    f = found.figures

    def figure(estimate):
        """The Metric, its tier from its own sessions: a judge may have repeated few answers."""
        shown = metric(estimate, found.records, estimate.n_sessions)
        if shown is not None:
            shown.confidence = confidence_tier(estimate.n_sessions)
        return shown

    return JudgeStability(
        reviewer_id=found.reviewer, items=found.items, repeats={str(k): n for k, n in found.k_counts.items()},
        identical=figure(f.identical), within_one_point=figure(f.within_one), same_verdict=figure(f.same_verdict),
        within_item_sd=figure(f.within_sd), reliability=figure(f.icc), pass_k=f.k, pass_hat_k=figure(f.pass_k),
        all_pass_given_any=figure(f.all_pass_given_any),
        least_stable=[UnstableItem(session_id=data.session_keys[item.session], model_id=data.models[item.model],
                                   scores=item.scores) for item in found.least_stable])


def stability(data: ScoreData, metric: Callable, rng: np.random.Generator, resamples: int) -> RepeatStability | None:
    """Every judge's repeat stability, or None when no judge scored an answer twice."""
    judges = repeat_stability(data, resamples, rng)
    if not judges:
        return None
    return RepeatStability(pass_threshold=pass_threshold(data.scale),
                           judges=[_judge(found, data, metric) for found in judges])
