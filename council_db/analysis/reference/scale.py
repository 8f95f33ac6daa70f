"""Agreement on the score scale, for sessions of three or more answers (pointwise scores).

* ``alpha``: Krippendorff's alpha (interval metric) between the judge and one rater at a time:
  each (answer, rater) is a unit holding the judge's score and that rater's. Alpha rather than
  a weighted kappa: scores are interval data on scales of up to 91 steps, which a kappa would
  treat as that many categories, and alpha takes any number of raters and missing scores; a
  quadratic-weighted kappa is an intraclass correlation (Fleiss & Cohen 1973), and interval
  alpha is one with chance taken from the pooled scores (Krippendorff 1970). Against single
  raters, not their mean, so it stands beside the raters' own alpha (the ceiling).
* ``mean_difference``: the judge's score minus the mean of the raters' scores of the same
  answer (positive: the judge is more generous than people), clustered by item, t-tested at 0.
* ``among_raters``: Krippendorff's alpha among the reference raters, the ceiling for ``alpha``.

CIs are cluster-robust by item: alpha's by the delta method on its per-item sums
(stats/linearized.py), the mean's CR1; t with G-1 df.
"""

from __future__ import annotations

import math

import numpy as np
from msgspec.structs import replace

from council_db.analysis.reference.verdicts import Answers
from council_db.analysis.stats.agreement import alpha_of_parts, answer_alpha_parts
from council_db.analysis.stats.clustered import clustered_mean
from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.linearized import linearized_estimate

ALPHA = "Krippendorff's alpha (interval), CR1 delta-method CI by item, t with G-1 df"


def _alpha(item: np.ndarray, unit: np.ndarray, rater: np.ndarray, score: np.ndarray, sessions: np.ndarray,
           level: float) -> Estimate:
    """Interval alpha over units grouped in items, its n the sessions the units came from."""
    if not len(score):
        return Estimate.missing(ALPHA, 0, level, se=None, p_value=None)
    parts, _, _ = answer_alpha_parts(item, unit, np.zeros(len(unit)), rater, score)
    found = linearized_estimate(parts, alpha_of_parts, level, ALPHA, (-math.inf, 1.0))
    return replace(found, n_sessions=len(np.unique(sessions)))


def alpha(answers: Answers, use: np.ndarray, judge: int, raters: np.ndarray, item: np.ndarray,
          level: float = 0.95) -> Estimate:
    """Alpha between the judge and single raters over the answers where ``use``."""
    judged = answers.scores[use, judge]
    rated = answers.scores[use][:, raters]
    answer, which = np.nonzero(np.isfinite(rated) & np.isfinite(judged)[:, None])
    unit = np.arange(len(answer))
    sessions = answers.session[use][answer]
    return _alpha(np.concatenate([item[sessions]] * 2), np.concatenate([unit, unit]),
                  np.repeat([0, 1], len(unit)), np.concatenate([judged[answer], rated[answer, which]]),
                  sessions, level)


def among_raters(answers: Answers, use: np.ndarray, raters: np.ndarray, item: np.ndarray,
                 level: float = 0.95) -> Estimate:
    """Alpha among the reference raters over the answers where ``use`` (those two or more rated)."""
    rated = answers.scores[use][:, raters]
    answer, which = np.nonzero(np.isfinite(rated))
    sessions = answers.session[use][answer]
    twice = (np.isfinite(rated).sum(axis=1) >= 2)[answer]
    return _alpha(item[sessions], answer, which, rated[answer, which], sessions[twice], level)


def mean_difference(answers: Answers, use: np.ndarray, judge: int, raters: np.ndarray, item: np.ndarray,
                    level: float = 0.95) -> Estimate:
    """The judge's score minus the raters' mean score of each answer, averaged over answers."""
    judged = answers.scores[use, judge]
    rated = answers.scores[use][:, raters]
    both = np.isfinite(judged) & np.isfinite(rated).any(axis=1)
    with np.errstate(invalid="ignore"):
        difference = judged[both] - np.nanmean(rated[both], axis=1)
    sessions = answers.session[use][both]
    found = clustered_mean(difference, item[sessions], level)
    return replace(found, n_sessions=len(np.unique(sessions)),
                   method="mean of judge minus raters' mean score per answer, CR1 by item, t with G-1 df")
