"""Self-preference on pairwise verdicts, defined on the pair: the odds that a judge picks its
own answer, against third judges' verdicts on the same two answers in the same display order.

Why not the joint model's term: on pairwise verdicts its figure is a difference of scores
within whatever a session happens to hold, so the same judgments read +0.29, +0.26 or +0.16
points depending only on how games were grouped into sessions. Here the unit is the pair
itself, and sessions play no part.

* A call is one verdict on two answers (``position.calls``: a swap design is two calls). An
  answer is its candidate and its length in characters, wherever it was judged (council-db
  stores no answer text; two answers of one model with one length are one answer). An answer
  of unknown length is known only within its session.
* A stratum is (judge J, the ordered pair of answers, J's own among them): J's own calls on
  it (J is one of the two candidates) beside third judges' calls on it (judges that are
  neither candidate: the other candidate has a stake of its own). Each call gives J's answer
  1 for a win, 0.5 for a tie, 0 for a loss (ties as half wins, as Chatbot Arena counts them).
* The odds ratio is Mantel-Haenszel's over the strata, R / S with R = sum a d / n and
  S = sum b c / n (a, b: J's own wins and losses; c, d: the third judges'; n: the stratum's
  calls): a common odds ratio that stays consistent with many sparse strata, where the
  conditional-logistic MLE needs iteration and the unconditional one is biased (Breslow 1981).
  The stratum holds the pair's quality difference and the display order fixed, as a
  conditional logistic regression with one intercept per stratum would.
* Its CI: the log odds ratio by the delta method over clusters (one cluster per unordered
  pair of answers: both orders, every judge whose answer is in it), CR1 with t(G - 1). Unlike
  the Robins-Breslow-Greenland variance this assumes no binomial draws within a stratum,
  which half wins and a judge's two orders of one pair are not.
"""

from __future__ import annotations

import math

import msgspec
import numpy as np

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.position.calls import calls
from council_db.analysis.stats import Estimate
from council_db.analysis.stats.inference import t_p_value
from council_db.analysis.stats.linearized import linearized_estimate
from council_db.analysis.stats.unique_rows import unique_rows

METHOD = "Mantel-Haenszel log odds ratio over (pair, order) strata, delta-method CR1 by pair, t(G-1)"


class PairSelfPreference(msgspec.Struct, frozen=True):
    judge: str | None  # None: pooled over every judge with own answers in pairs
    estimate: Estimate  # log odds ratio; n_sessions: the pairs (clusters)
    n_records: int  # scores of the calls in the informative strata
    n_sessions: int  # sessions holding those calls


class _Sides(msgspec.Struct, frozen=True):
    """One row per (call, judge whose answer is in it): whose stratum, and how it went."""

    judge: np.ndarray  # the candidate model whose answer this row follows
    stratum: np.ndarray  # (judge, ordered pair) number
    cluster: np.ndarray  # unordered pair number
    own: np.ndarray  # True: the judge's own call; False: a third judge's
    won: np.ndarray  # 1 win, 0.5 tie, 0 loss for the judge's answer
    records: np.ndarray  # (rows, 2): the call's two records


def self_preference_on_pairs(data: ScoreData) -> list[PairSelfPreference]:
    """Pooled first, then one per judge whose own answers met third judges' calls; empty when
    no call has a judge that is one of its two candidates."""
    sides = _sides(data)
    if sides is None:
        return []
    informative = _informative(sides)
    found = [_estimate(sides, informative, None, data)]
    for judge in np.unique(sides.judge[sides.own]).tolist():
        found.append(_estimate(sides, informative & (sides.judge == judge), data.models[judge], data))
    return [f for f in found if f.estimate.n_sessions]


def _sides(data: ScoreData) -> _Sides | None:
    """Every two-answer call as rows: a judge's own call once (its answer's side), a third
    judge's call once per side. None when no judge judged a pair holding its own answer."""
    call = calls(data).call
    shown = np.flatnonzero(call >= 0)
    size = np.bincount(call[shown])
    shown = shown[size[call[shown]] == 2]
    order = shown[np.lexsort((data.slot[shown], call[shown]))].reshape(-1, 2)  # first shown, second shown
    order = order[data.model[order[:, 0]] != data.model[order[:, 1]]]
    own = data.self_review[order]
    if not own.any():
        return None
    answer = _answers(data)[order]
    _, pair, _ = unique_rows(answer[:, 0], answer[:, 1])
    _, cluster, _ = unique_rows(answer.min(axis=1), answer.max(axis=1))
    score = data.score[order]
    won = np.where(score[:, 0] > score[:, 1], 1.0, np.where(score[:, 0] < score[:, 1], 0.0, 0.5))
    third = ~own.any(axis=1)
    rows, side = [], []
    for column in (0, 1):  # a judge's own call on its answer's side; a third judge's on both
        mine = own[:, column] | third
        rows.append(np.flatnonzero(mine))
        side.append(np.full(int(mine.sum()), column))
    row, side = np.concatenate(rows), np.concatenate(side)
    judge = data.model[order[row, side]]
    _, stratum, _ = unique_rows(judge, pair[row])
    return _Sides(judge=judge, stratum=stratum, cluster=cluster[row], own=~third[row],
                  won=np.where(side == 0, won[row], 1.0 - won[row]), records=order[row])


def _answers(data: ScoreData) -> np.ndarray:
    """An answer number per record: its candidate and length in characters, across sessions;
    within its session only when the length is unknown."""
    known = ~np.isnan(data.log_length)
    chars = np.where(known, np.rint(np.expm1(np.where(known, data.log_length, 0.0))) + 1, 0).astype(np.int64)
    home = np.where(known, 0, data.session + 1)
    return unique_rows(data.model, chars, home)[1]


def _informative(sides: _Sides) -> np.ndarray:
    """Rows of strata that hold both the judge's own calls and third judges' calls."""
    n_strata = int(sides.stratum.max()) + 1
    own = np.bincount(sides.stratum, weights=sides.own, minlength=n_strata)
    third = np.bincount(sides.stratum, weights=~sides.own, minlength=n_strata)
    return ((own > 0) & (third > 0))[sides.stratum]


def _estimate(sides: _Sides, keep: np.ndarray, judge: str | None, data: ScoreData) -> PairSelfPreference:
    """The Mantel-Haenszel log odds ratio over the kept rows' strata, clustered by pair."""
    rows = np.flatnonzero(keep)
    if len(rows) == 0:
        return PairSelfPreference(judge, Estimate.missing(METHOD, 0), 0, 0)
    _, stratum = np.unique(sides.stratum[rows], return_inverse=True)
    _, cluster_of = np.unique(sides.cluster[rows], return_inverse=True)
    own, won = sides.own[rows], sides.won[rows]
    a, b = (np.bincount(stratum, weights=w) for w in (won * own, (1 - won) * own))
    c, d = (np.bincount(stratum, weights=w) for w in (won * ~own, (1 - won) * ~own))
    n = a + b + c + d
    stratum_cluster = np.zeros(len(n), dtype=np.int64)
    stratum_cluster[stratum] = cluster_of
    parts = np.stack([np.bincount(stratum_cluster, weights=w) for w in (a * d / n, b * c / n)], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):  # a judge that never loses (or wins): no odds ratio
        found = linearized_estimate(parts, lambda totals: np.log(totals[:, 0] / totals[:, 1]), method=METHOD)
    if found.se is not None and math.isfinite(found.se) and found.se > 0:
        found = Estimate(found.estimate, found.ci_low, found.ci_high, found.se,
                         float(t_p_value(found.estimate / found.se, len(parts) - 1)), found.level, len(parts), METHOD)
    elif not math.isfinite(found.estimate):
        found = Estimate.missing(METHOD, len(parts))
    used = np.zeros(data.n_records, dtype=bool)
    used[sides.records[rows].ravel()] = True
    sessions = int((np.bincount(data.session[used], minlength=data.n_sessions) > 0).sum())
    return PairSelfPreference(judge, found, int(used.sum()), sessions)
