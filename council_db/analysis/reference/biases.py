"""A judge's biases measured against the reference raters, not only against other judges.

People prefer longer answers too, and may favour the first one shown: a judge's own length
effect or first-slot preference says little until the reference raters' own is taken out.

* ``length``: the within-(session, reviewer) slope of score on log length, in points per SD of
  log length, the judge's minus the reference raters' (pooled), over sessions both scored.
* ``first_slot``: the within-(session, reviewer) slope of score on "shown first" (0/1): the
  points the first-shown answer gains, the judge's minus the raters'.
* ``self_preference`` (a judge that is also a candidate): how often it prefers its own answer
  when the reference prefers the other, minus how often it prefers the reference's worse answer
  on pairs without its own; and the share preferring its own answer given each reference verdict.
* ``reasoning_chain`` (ADR-015: longer is not better): over the pairs the reference decided,
  the slope of the judge's verdict for the reference's worse answer (+1 for it, 0 tie, -1
  against) on how much longer that answer is (SD of log length). Positive: length talks the
  judge into the wrong answer.

Every CI is cluster-robust by item, from the slopes' influence functions (stats/slopes.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from msgspec.structs import replace

from council_db.analysis.loading.score_data import ScoreData, known_lengths
from council_db.analysis.reference.verdicts import Answers, Majority, Pairs
from council_db.analysis.stats.clustered import clustered_share
from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.linearized import effective_wilson
from council_db.analysis.stats.slopes import SlopePart, slope_contrast


@dataclass(frozen=True)
class Contrast:
    """The judge's effect minus the reference raters' own, and each of them."""

    difference: Estimate  # p_value tests 0
    judge: Estimate
    reference: Estimate


def _within(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Values less the mean of their group."""
    _, codes = np.unique(group, return_inverse=True)
    totals = np.bincount(codes, weights=values)
    return values - (totals / np.bincount(codes))[codes]


def _contrast(data: ScoreData, keep: np.ndarray, x: np.ndarray, judge: int, raters: np.ndarray,
              item: np.ndarray, what: str) -> Contrast:
    """Within-(session, reviewer) slopes of score on ``x``, over the records where ``keep`` in
    sessions where the judge and a rater both have one."""
    is_judge, is_rater = keep & (data.reviewer == judge), keep & np.isin(data.reviewer, raters)
    shared = np.isin(data.session, data.session[is_judge]) & np.isin(data.session, data.session[is_rater])
    parts = []
    for rows, weight in ((is_judge & shared, 1.0), (is_rater & shared, -1.0)):
        group = data.session[rows] * len(data.reviewers) + data.reviewer[rows]
        parts.append(SlopePart(_within(x[rows], group), _within(data.score[rows], group),
                               item[data.session[rows]], weight))
    sessions = len(np.unique(data.session[is_judge & shared]))

    def named(found: Estimate) -> Estimate:
        return replace(found, n_sessions=sessions, method=f"{what}, within (session, reviewer), CR1 by item")

    return Contrast(named(slope_contrast(parts)), named(slope_contrast(parts[:1])),
                    named(slope_contrast([parts[1]._replace(weight=1.0)])))


def length(data: ScoreData, judge: int, raters: np.ndarray, item: np.ndarray, sd: float) -> Contrast:
    """Points per SD of log length (``sd``: the window's), the judge's minus the reference raters'."""
    x = np.nan_to_num(data.log_length) / sd
    return _contrast(data, known_lengths(data), x, judge, raters, item, "points per SD of log length")


def first_slot(data: ScoreData, judge: int, raters: np.ndarray, item: np.ndarray) -> Contrast:
    """Points the first-shown answer gains, the judge's minus the reference raters'."""
    return _contrast(data, data.slot >= 0, (data.slot == 0).astype(np.float64), judge, raters, item,
                     "points for being shown first")


@dataclass(frozen=True)
class SelfPreference:
    excess: Estimate  # P(own | reference prefers the other) - P(reference's worse | pairs without own)
    own_when_reference_prefers_own: Estimate
    own_when_reference_ties: Estimate
    own_when_reference_prefers_other: Estimate


def self_preference(data: ScoreData, found: Answers, pairs: Pairs, judge: int, reference: Majority,
                    item: np.ndarray) -> SelfPreference | None:
    """None when the judge is not among the candidates (or never met its own answer)."""
    name = data.judge_model(data.reviewers[judge])
    if name not in data.models:
        return None
    own_model = data.models.index(name)
    own_first, own_second = found.model[pairs.first] == own_model, found.model[pairs.second] == own_model
    judged, truth = pairs.verdicts[:, judge], reference.verdict
    both = np.isfinite(judged) & np.isfinite(truth)
    own = both & (own_first != own_second)
    if not own.any():
        return None
    toward_own = np.where(own_first, 1.0, -1.0)
    picks_own, says = judged * toward_own == 1, truth * toward_own
    clusters = item[pairs.session]
    others = both & ~own_first & ~own_second & (truth != 0)
    picks_worse = judged == -truth

    def share(rows: np.ndarray, values: np.ndarray) -> Estimate:
        found_share = effective_wilson(replace(clustered_share(values[rows], clusters[rows]), p_value=None),
                                       int(rows.sum()))
        return replace(found_share, n_sessions=len(np.unique(pairs.session[rows])))

    excess = slope_contrast([SlopePart(np.ones(int((own & (says == -1)).sum())),
                                       picks_own[own & (says == -1)].astype(np.float64),
                                       clusters[own & (says == -1)]),
                             SlopePart(np.ones(int(others.sum())), picks_worse[others].astype(np.float64),
                                       clusters[others], -1.0)],
                            method="share preferring its own worse answer minus the reference's worse one elsewhere,"
                                   " CR1 by item")
    return SelfPreference(replace(excess, n_sessions=len(np.unique(pairs.session[own]))),
                          *(share(own & (says == c), picks_own) for c in (1, 0, -1)))


def reasoning_chain(found: Answers, pairs: Pairs, judge: int, reference: Majority, item: np.ndarray,
                    sd: float) -> Estimate:
    """Slope of the judge's verdict for the reference's worse answer on its length advantage."""
    judged, truth = pairs.verdicts[:, judge], reference.verdict
    advantage = (found.log_length[pairs.first] - found.log_length[pairs.second]) / sd
    use = np.isfinite(judged) & np.isfinite(truth) & (truth != 0) & np.isfinite(advantage)
    x, y = -truth[use] * advantage[use], -truth[use] * judged[use]
    found_slope = slope_contrast([SlopePart(x - x.mean(), y - y.mean(), item[pairs.session[use]])]) if use.any() \
        else Estimate.missing()
    return replace(found_slope, n_sessions=len(np.unique(pairs.session[use])),
                   method="slope of the verdict for the reference's worse answer per SD of its log-length "
                          "advantage, CR1 by item")
