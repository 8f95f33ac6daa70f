"""Verdicts: which of two answers in a session a reviewer scored higher, or a tie.

An answer is (session, candidate, length), as everywhere (stats/answers.py); a reviewer's
score of it is the mean of its records of it, so a judge that saw both orders gives one net
verdict (JudgeBench's rule: a preference in one order and a tie in the other is that
preference; opposite preferences cancel to a tie; MT-bench's llm_judge calls the first case
"inconsistent" and counts it a tie). Two answers make one pair (a pairwise session, the issue's
"two candidates a session"); k answers make k(k-1)/2 pairs (pointwise scores, where the pairs'
verdicts are the session's ranking). A verdict is a tie when the two scores differ by at most
``tie_tolerance`` points (default 0: a tie is an equal score on the scale's own steps; win/tie/
loss on the "0-1" scale is 1, 0.5, 0, so its ties are exact).

The reference verdict of a pair is the strict majority of the reference raters' verdicts on it:
more than half of those who gave one. Pairs where no class has that are left out and counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.stats.answers import answer_index, within_session_pairs

FIRST_BETTER, TIE, SECOND_BETTER = 1, 0, -1
ROUNDING = 1e-9  # score differences below this are rounding, not a preference


@dataclass(frozen=True)
class Answers:
    """Every answer with each reviewer's mean score of it."""

    session: np.ndarray  # (A,) int64, answers in (session, model, length) order
    model: np.ndarray  # (A,) int64
    log_length: np.ndarray  # (A,) float64, NaN when unknown
    scores: np.ndarray  # (A, R) float64, NaN where the reviewer did not score the answer
    of_record: np.ndarray  # (N,) int64: the answer each of the data's records is about


def answers(data: ScoreData) -> Answers:
    answer, first = answer_index(data.session, data.model, data.log_length)
    a, r = len(first), len(data.reviewers)
    cell = answer * r + data.reviewer
    totals = np.bincount(cell, weights=data.score, minlength=a * r)
    counts = np.bincount(cell, minlength=a * r)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(counts > 0, totals / np.maximum(counts, 1), np.nan).reshape(a, r)
    return Answers(data.session[first], data.model[first], data.log_length[first], scores, answer)


@dataclass(frozen=True)
class Pairs:
    """Every pair of answers in one session, the first being the one numbered lower (the
    candidate whose name sorts first), with each reviewer's verdict on it."""

    first: np.ndarray  # (P,) answer numbers
    second: np.ndarray  # (P,)
    session: np.ndarray  # (P,)
    two_candidates: np.ndarray  # (P,) bool: the session's only pair
    verdicts: np.ndarray  # (P, R) float64: +1 first better, 0 tie, -1 second better, NaN none

    def __len__(self) -> int:
        return len(self.first)


def pairs(found: Answers, tie_tolerance: float = 0.0) -> Pairs:
    """All within-session pairs of ``found``'s answers and every reviewer's verdict on each."""
    if tie_tolerance < 0:
        raise ValueError(f"tie tolerance must be >= 0 points, got {tie_tolerance}")
    first, second = within_session_pairs(found.session)
    _, answer_session, sizes = np.unique(found.session, return_inverse=True, return_counts=True)
    session, two = found.session[first], sizes[answer_session[first]] == 2
    difference = found.scores[first] - found.scores[second]
    with np.errstate(invalid="ignore"):
        verdicts = np.where(np.abs(difference) <= tie_tolerance + ROUNDING, 0.0, np.sign(difference))
    return Pairs(first, second, session, two, verdicts)


def class_counts(verdicts: np.ndarray) -> np.ndarray:
    """Per pair (row), how many of the columns said second better, tie, first better: (P, 3)."""
    return np.stack([(verdicts == v).sum(axis=1) for v in (SECOND_BETTER, TIE, FIRST_BETTER)], axis=1)


@dataclass(frozen=True)
class Majority:
    verdict: np.ndarray  # (P,) the strict majority of the raters' verdicts, NaN where there is none
    counts: np.ndarray  # (P, 3) the raters' verdicts per class
    no_majority: int  # pairs with a rater's verdict but no strict majority


def majority(found: Pairs, raters: np.ndarray) -> Majority:
    """The reference verdict of each pair from the verdicts of ``raters`` (reviewer codes)."""
    counts = class_counts(found.verdicts[:, raters])
    rated = counts.sum(axis=1)
    best = counts.argmax(axis=1)
    strict = 2 * counts[np.arange(len(counts)), best] > rated
    verdict = np.where((rated > 0) & strict, best - 1.0, np.nan)
    return Majority(verdict, counts, int(((rated > 0) & ~strict).sum()))


def subset(found: Pairs, keep: np.ndarray) -> Pairs:
    """Only the pairs where ``keep``."""
    return Pairs(found.first[keep], found.second[keep], found.session[keep], found.two_candidates[keep],
                 found.verdicts[keep])
