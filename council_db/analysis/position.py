"""Position consistency: when the same two answers were shown in both orders (to different
reviewers of one session), how often does the one shown first win?

Only pairs seen in both orders count, so each pair's own quality difference cancels out:
0.5 means no position effect, above 0.5 primacy, below recency. A judgment where both answers
got the same score is neither a win nor a loss: the share counts wins among decided judgments
only (on a 1-10 integer scale ties are common). With ADR-017's default (one shuffle per
session) every reviewer sees one order and there is nothing to compare.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from council_db.analysis.score_data import ScoreData
from council_db.analysis.stats import Estimate, clustered_mean

NO_POSITION_EFFECT = 0.5  # the first-shown answer wins half the decided judgments


@dataclass
class Judgments:
    session: np.ndarray  # the session of each judgment (for clustered CIs)
    first_won: np.ndarray  # 1.0 when the answer shown first scored higher, 0.0 when lower
    pairs: int  # distinct (session, answer pair) seen in both orders


def _one_order_per_session(data: ScoreData, shown: np.ndarray) -> bool:
    """True when every answer kept its slot for all reviewers of its session (one shuffle per
    session): then no pair was seen in both orders, and the pairing below can be skipped."""
    answer_slots = np.unique(np.stack([data.session[shown], data.model[shown], data.slot[shown]]), axis=1)
    answers = np.unique(answer_slots[:2], axis=1)
    return answer_slots.shape[1] == answers.shape[1]


DESIGNS = ("one_shuffle", "per_reviewer", "balanced")


def presentation_designs(data: ScoreData) -> dict[str, int]:
    """How many sessions used each presentation design (display-order records only), as
    ``council-db orders`` names them: ``one_shuffle`` (every reviewer saw one order: ADR-017's
    default, where slot and answer cannot be told apart within a session), ``per_reviewer``
    (orders differ between reviewers) and ``balanced`` (orders differ and every answer was
    shown in every slot equally often: a Latin square)."""
    shown = data.slot >= 0
    if not shown.any():
        return {}
    session, model, slot = data.session[shown], data.model[shown], data.slot[shown]
    triples, counts = np.unique(np.stack([session, model, slot]), axis=1, return_counts=True)
    answers, answer_of = np.unique(triples[:2], axis=1, return_inverse=True)
    slots_per_answer = np.bincount(answer_of.ravel(), minlength=answers.shape[1])
    varied = np.bincount(answers[0], weights=slots_per_answer > 1, minlength=data.n_sessions) > 0
    n_slots = np.bincount(np.unique(np.stack([session, slot]), axis=1)[0], minlength=data.n_sessions)
    n_answers = np.bincount(answers[0], minlength=data.n_sessions)
    low = np.full(data.n_sessions, np.iinfo(np.int64).max)
    high = np.zeros(data.n_sessions, dtype=np.int64)
    np.minimum.at(low, triples[0], counts)
    np.maximum.at(high, triples[0], counts)
    # balanced: each answer in each slot (answers x slots cells, all present), equally often
    cells = np.bincount(triples[0], minlength=data.n_sessions)
    balanced = varied & (low == high) & (cells == n_answers * n_slots) & (n_slots == n_answers)
    present = np.bincount(session, minlength=data.n_sessions) > 0
    found = {"one_shuffle": int((present & ~varied).sum()), "per_reviewer": int((varied & ~balanced).sum()),
             "balanced": int(balanced.sum())}
    return {design: count for design, count in found.items() if count}


def first_shown_judgments(data: ScoreData) -> Judgments:
    """Judgments of pairs seen in both orders; ties carry no preference and are left out."""
    shown = np.flatnonzero(data.slot >= 0)
    if _one_order_per_session(data, shown):
        return Judgments(np.array([], dtype=np.int64), np.array([]), 0)
    order = shown[np.lexsort((data.slot[shown], data.reviewer[shown], data.session[shown]))]
    by_pair: dict[tuple[int, int, int], list[tuple[bool, float]]] = {}
    start = 0
    keys = data.session[order] * (len(data.reviewers) + 1) + data.reviewer[order]
    for end in np.append(np.flatnonzero(np.diff(keys)) + 1, len(order)):
        group = order[start:end]  # one reviewer in one session, in display order
        start = end
        for earlier, later in combinations(group, 2):
            a, b = data.model[earlier], data.model[later]
            if a == b:
                continue
            low, high = (a, b) if a < b else (b, a)
            margin = data.score[earlier] - data.score[later]
            by_pair.setdefault((int(data.session[earlier]), int(low), int(high)), []).append((a < b, margin))
    sessions, wins, pairs = [], [], 0
    for (session, _, _), seen in by_pair.items():
        if len({low_first for low_first, _ in seen}) < 2:
            continue  # seen in one order only: quality and position cannot be told apart
        pairs += 1
        for _, margin in seen:
            if margin != 0:
                sessions.append(session)
                wins.append(1.0 if margin > 0 else 0.0)
    return Judgments(np.array(sessions, dtype=np.int64), np.array(wins), pairs)


def first_shown_share(judgments: Judgments, level: float = 0.95) -> Estimate:
    """The share of decided judgments won by the first-shown answer, its p-value testing
    share = 0.5 (no position effect). Judgments of one session share answers and reviewers,
    so the SE is clustered by session (CR1, t with G-1 df); CI and p-value come from that one
    SE and t, so the CI leaves out 0.5 exactly when p < 1 - level."""
    return clustered_mean(judgments.first_won, judgments.session, level, null=NO_POSITION_EFFECT)
