"""Accuracy against gold labels, on two-candidate sessions, as LLMBar and JudgeBench report it.

A gold reviewer's verdict on the pair is the right answer (the strict majority when several
give one). Each of the judge's calls is read in its display order: ``listed`` when the pair's
first answer (the candidate whose name sorts first: LLMBar's output_1) was shown first,
``swapped`` when it was shown second, ``unknown`` when the records carry no display slot. A
judge that judged one order more than once gives that order its net verdict (verdicts.py).

* ``accuracy_listed`` / ``accuracy_swapped``: the share of the order's verdicts matching gold
  (LLMBar's correct_False / correct_True); ``accuracy``: over every verdict of every order.
* ``both_correct``: pairs judged in both orders, right in both (LLMBar's correct_both).
* ``same_verdict``: pairs judged in both orders, the same verdict in both (LLMBar's equal:
  position consistency, right or wrong).
* ``net_correct``: JudgeBench's rule (utils/metrics.py, compute_final_metrics): over the
  orders the pair was judged in, +1 for a verdict matching gold, -1 for the opposite one, 0 for
  a tie; right when the sum is positive. Over pairs judged in at least one order (JudgeBench
  also counts a pair whose every judgment failed to parse, as not right; such a pair has no
  record here).

Each share has its count, its n and a CI clustered by item: Wilson's on the effective sample
size (stats/linearized.py), as accuracies near 1 need; they are figures, without a p-value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from msgspec.structs import replace

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.reference.verdicts import ROUNDING, Answers, Majority, Pairs
from council_db.analysis.stats.clustered import clustered_share
from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.linearized import effective_wilson

LISTED, SWAPPED, UNKNOWN = 0, 1, 2
ORDERS = 3


@dataclass(frozen=True)
class Share:
    estimate: Estimate
    count: int
    of: int


@dataclass(frozen=True)
class GoldAccuracy:
    accuracy_listed: Share
    accuracy_swapped: Share
    accuracy: Share
    both_correct: Share
    same_verdict: Share
    net_correct: Share


def order_verdicts(data: ScoreData, found: Answers, two: Pairs, tie_tolerance: float = 0.0) -> np.ndarray:
    """Each reviewer's verdict on each two-candidate pair per display order: (P, R, ORDERS),
    NaN where it gave none in that order."""
    n_pairs, n_reviewers = len(two), len(data.reviewers)
    pair_of = np.full(len(found.session), -1, dtype=np.int64)
    second = np.zeros(len(found.session), dtype=bool)
    pair_of[two.first], pair_of[two.second], second[two.second] = np.arange(n_pairs), np.arange(n_pairs), True
    pair = pair_of[found.of_record]
    use = pair >= 0
    is_second, slot = second[found.of_record][use], data.slot[use]
    order = np.where(slot < 0, UNKNOWN, np.where((slot == 0) == is_second, SWAPPED, LISTED))
    cell = ((pair[use] * n_reviewers + data.reviewer[use]) * ORDERS + order) * 2 + is_second
    size = n_pairs * n_reviewers * ORDERS * 2
    totals = np.bincount(cell, weights=data.score[use], minlength=size).reshape(n_pairs, n_reviewers, ORDERS, 2)
    counts = np.bincount(cell, minlength=size).reshape(n_pairs, n_reviewers, ORDERS, 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)
        difference = means[..., 0] - means[..., 1]
        return np.where(np.abs(difference) <= tie_tolerance + ROUNDING, 0.0, np.sign(difference))


def _share(right: np.ndarray, items: np.ndarray, sessions: np.ndarray, level: float) -> Share:
    found = effective_wilson(replace(clustered_share(right, items, level), p_value=None,
                                     method="share, CR1 by item, t with G-1 df"), len(right))
    return Share(replace(found, n_sessions=len(np.unique(sessions))), int(right.sum()), len(right))


def accuracy(orders: np.ndarray, two: Pairs, judge: int, gold: Majority, item: np.ndarray,
             level: float = 0.95) -> GoldAccuracy:
    """The judge's accuracy figures over the two-candidate pairs with a gold verdict."""
    labelled = np.isfinite(gold.verdict)
    mine, truth = orders[labelled, judge, :], gold.verdict[labelled][:, None]
    sessions = two.session[labelled]
    items = item[sessions]
    given = np.isfinite(mine)
    right = mine == truth

    def over(rows: np.ndarray, values: np.ndarray) -> Share:
        return _share(values[rows], items[rows], sessions[rows], level)

    per_order = [over(given[:, o], right[:, o]) for o in (LISTED, SWAPPED)]
    every = np.broadcast_to(np.arange(len(mine))[:, None], given.shape)[given]
    overall = _share(right[given], items[every], sessions[every], level)
    both = given[:, LISTED] & given[:, SWAPPED]
    wrong = (mine == -truth) & (truth != 0)
    net = np.where(given, right.astype(np.int64) - wrong, 0).sum(axis=1) > 0
    return GoldAccuracy(per_order[0], per_order[1], overall, over(both, right[:, LISTED] & right[:, SWAPPED]),
                        over(both, mine[:, LISTED] == mine[:, SWAPPED]), over(given.any(axis=1), net))
