"""ADR 0017's strategies for turning several reviewers' scores of one answer into one score.

A *candidate answer* is one model's answer in one session (one model under two labels is two
answers, told apart by length as in ``stats.answer_index``). Every strategy gives each answer
one consensus score, in score points:

* ``mean``: the average of its reviewers' scores.
* ``weighted``: sum(w_r * score) / sum(w_r); reviewers without a weight weigh 1.
* ``median``: the median of its reviewers' scores (the mean of the middle two for an even count).
* ``bias-adjusted``: the mean of score - offset_r, where offset_r is reviewer r's bias in score
  points (negative = harsh): the score the average reviewer would have given.
* ``normalized``: each score becomes its reviewer's z-score, (score - mean_r) / sd_r; the mean z
  is put back on the average reviewer's scale (mean of the reviewer means + z * mean of the
  reviewer SDs), so it reads in score points and ranks the same as the mean z.
* ``quality`` (leaderboard only, its default): not a per-answer consensus but the joint
  model's candidate quality, as in the bias report (``quality.py``).
* ``ppi`` (leaderboard only): candidate quality on the human or gold raters' scale, the judges'
  scores corrected by the sessions people rated (``calibrated_by_people.py``).
* ``bradley-terry`` (leaderboard only): the pairwise model's strengths (``pairwise_board.py``).

Self-reviews (reviewer = candidate model) are left out by default: they are data about
self-preference, not ordinary scores. Nothing here changes stored scores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.stats import answer_index
from council_db.contract.fields import UNKNOWN_LENGTH
from council_db.errors import CouncilDbError


class Method(str, Enum):
    mean = "mean"
    weighted = "weighted"
    median = "median"
    bias_adjusted = "bias-adjusted"
    normalized = "normalized"
    quality = "quality"
    ppi = "ppi"
    bradley_terry = "bradley-terry"


# What each method takes out of the scores, said in every leaderboard (self-reviews aside:
# the consensus methods leave them out unless --include-self keeps them).
REMOVES = {
    Method.mean: "nothing: reviewer severity, display slot and answer length all stay in the scores",
    Method.weighted: "nothing estimated: your weights change each reviewer's say; severity, display slot and "
                     "answer length stay in",
    Method.median: "the pull of outlying scores; reviewer severity, display slot and answer length stay in",
    Method.bias_adjusted: "reviewer severity (one offset per reviewer); display slot and answer length stay in",
    Method.normalized: "each reviewer's mean and spread of scores; display slot and answer length stay in",
    Method.quality: "reviewer severity, display slot, self-preference and answer length (within model), fitted "
                    "at once with session effects: the bias report's candidate quality, points vs the average model",
    Method.ppi: "the judges' bias per candidate against the human or gold raters (judge_bias: measured on the sessions "
                "they rated, weighed by lambda), whatever it comes from: severity, slot, length, self-preference",
    Method.bradley_terry: "the first-shown advantage per judge; with --style, the style covariates' effect",
}


@dataclass(frozen=True)
class Calibration:
    """What a strategy needs per reviewer, and where it came from (said in every output)."""

    weights: dict[str, float] = field(default_factory=dict)  # weighted; a reviewer not named weighs 1
    offsets: dict[str, float] = field(default_factory=dict)  # bias-adjusted; every reviewer scored
    means: dict[str, float] = field(default_factory=dict)  # normalized; every reviewer scored
    sds: dict[str, float] = field(default_factory=dict)
    source: str = "none needed"
    n_sessions: int | None = None  # sessions the offsets or scales were estimated from
    n_records: int | None = None


@dataclass(frozen=True)
class Consensus:
    """One consensus score per candidate answer, answers in (session, model, length) order."""

    session: np.ndarray  # int64 session number in the ScoreData
    model: np.ndarray  # int64 index into ``models``
    length: np.ndarray  # int64 response_length_chars, fields.UNKNOWN_LENGTH where unknown
    score: np.ndarray  # float64 consensus score, score points
    n_reviewers: np.ndarray  # int64 reviewer scores the consensus rests on
    models: list[str]
    session_keys: list[str]

    def __len__(self) -> int:
        return len(self.score)


def consensus(data: ScoreData, method: Method, calibration: Calibration, include_self: bool = False) -> Consensus:
    """Each answer's consensus score under ``method``. Raises CouncilDbError when the
    calibration lacks a reviewer the method needs (the message names the reviewer and the fix)."""
    if method is Method.quality:
        raise CouncilDbError("--method quality ranks models over a window (council-db leaderboard); it gives no "
                             "per-answer score: use --method mean, weighted, median, bias-adjusted or normalized")
    keep = np.ones(data.n_records, dtype=bool) if include_self else ~data.self_review
    reviewer, score = data.reviewer[keep], data.score[keep]
    weight = np.ones(len(score))
    if method is Method.weighted:
        weight = np.array([calibration.weights.get(name, 1.0) for name in data.reviewers])[reviewer]
    elif method is Method.bias_adjusted:
        score = score - _per_reviewer(calibration.offsets, data.reviewers, reviewer, "offset")
    elif method is Method.normalized:
        means = _per_reviewer(calibration.means, data.reviewers, reviewer, "mean and SD")
        sds = _per_reviewer(calibration.sds, data.reviewers, reviewer, "mean and SD")
        common_mean = float(np.mean(list(calibration.means.values())))
        common_sd = float(np.mean(list(calibration.sds.values())))
        score = common_mean + common_sd * (score - means) / sds

    answer, first = answer_index(data.session[keep], data.model[keep], data.log_length[keep])
    used = weight > 0
    n_reviewers = np.bincount(answer[used], minlength=len(first))
    if method is Method.median:
        values = _grouped_median(answer, score, len(first))
    else:
        totals = np.bincount(answer, weights=weight * score, minlength=len(first))
        weights = np.bincount(answer, weights=weight, minlength=len(first))
        with np.errstate(invalid="ignore", divide="ignore"):
            values = totals / weights
    scored = n_reviewers > 0  # an answer only zero-weight reviewers scored has no consensus
    first = first[scored]
    return Consensus(
        session=data.session[keep][first], model=data.model[keep][first],
        length=_chars(data.log_length[keep][first]),
        score=values[scored], n_reviewers=n_reviewers[scored].astype(np.int64),
        models=list(data.models), session_keys=list(data.session_keys),
    )


def _per_reviewer(values: dict[str, float], names: list[str], reviewer: np.ndarray, what: str) -> np.ndarray:
    """Each record's reviewer's value; every reviewer present must have one."""
    present = sorted({names[r] for r in np.unique(reviewer).tolist()})
    missing = [name for name in present if name not in values]
    if missing:
        raise CouncilDbError(
            f"no {what} for reviewer(s) {', '.join(missing)}: they have too few scores in the calibration "
            "window; widen the window or give --offsets REVIEWER=X,... (bias-adjusted) or use another --method")
    return np.array([values.get(name, np.nan) for name in names])[reviewer]


def _grouped_median(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """The median of ``values`` within each group (NaN for an empty group), without a loop."""
    order = np.lexsort((values, group))
    g, v = group[order], values[order]
    counts = np.bincount(g, minlength=n_groups)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    out = np.full(n_groups, np.nan)
    has = counts > 0
    low = starts[has] + (counts[has] - 1) // 2
    high = starts[has] + counts[has] // 2
    out[has] = (v[low] + v[high]) / 2.0
    return out


def _chars(log_length: np.ndarray) -> np.ndarray:
    """Characters from log(chars + 1); fields.UNKNOWN_LENGTH where the length is unknown (NaN)."""
    sized = ~np.isnan(log_length)
    chars = np.full(len(log_length), UNKNOWN_LENGTH, dtype=np.int64)
    chars[sized] = np.rint(np.expm1(log_length[sized]))
    return chars
