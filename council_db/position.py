"""Position consistency: when the same two answers were shown in both orders (to different
reviewers of one session), how often does the one shown first win?

Only pairs seen in both orders count, so each pair's own quality difference cancels out:
0.5 means no position effect, above 0.5 primacy, below recency. With ADR-017's default
(one shuffle per session) every reviewer sees one order and there is nothing to compare.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from council_db.analysis_data import ScoreData


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
