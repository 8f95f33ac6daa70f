"""Position consistency: when the same two answers were shown in both orders (to different
reviewers of one session, or to one reviewer twice), how often does the one shown first win?

Only pairs seen in both orders count, so each pair's own quality difference cancels out (a
pair of copies of one answer, shown together, is its own other order):
0.5 means no position effect, above 0.5 primacy, below recency. A judgment where both answers
got the same score is neither a win nor a loss: the share counts wins among decided judgments
only (on a 1-10 integer scale ties are common). With ADR-017's default (one shuffle per
session) every reviewer sees one order and there is nothing to compare. Each judgment
compares two answers shown together in one call (``calls``: one reviewer scoring a pair in
both orders in one session is two calls, a swap design).
"""

from __future__ import annotations

import msgspec
import numpy as np

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.position.calls import calls
from council_db.analysis.stats import Estimate, clustered_share
from council_db.analysis.stats.unique_rows import distinct, unique_rows
from council_db.integer_keys import sort_order

NO_POSITION_EFFECT = 0.5  # the first-shown answer wins half the decided judgments


class Judgments(msgspec.Struct):
    session: np.ndarray  # the session of each judgment (for clustered CIs)
    reviewer: np.ndarray  # who judged
    first_won: np.ndarray  # 1.0 when the answer shown first scored higher, 0.0 when lower
    pairs: int  # distinct (session, answer pair) seen in both orders
    swaps: int = 0  # pairs one reviewer scored in both orders in one session (a swap design)
    unresolved: int = 0  # (session, reviewer) groups whose calls cannot be told apart (left out)


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
    triples, _, counts = unique_rows(session, model, slot)
    answers, answer_of, _ = unique_rows(triples[0], triples[1])
    slots_per_answer = np.bincount(answer_of, minlength=answers.shape[1])
    varied = np.bincount(answers[0], weights=slots_per_answer > 1, minlength=data.n_sessions) > 0
    n_slots = np.bincount(unique_rows(session, slot)[0][0], minlength=data.n_sessions)
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
    """Judgments of pairs seen in both orders in their session (by one reviewer or several; a
    pair of copies of one answer counts); each judgment compares two answers shown together in
    one call (``calls``). Ties carry no preference and are left out."""
    found = calls(data)
    first, later = _pairs_within_calls(data, found.call)
    a, b = data.model[first], data.model[later]
    session = data.session[first]
    keys, pair_of, _ = unique_rows(session, np.minimum(a, b), np.maximum(a, b))
    low_first = np.bincount(pair_of, weights=a < b, minlength=keys.shape[1])
    high_first = np.bincount(pair_of, weights=a > b, minlength=keys.shape[1])
    both = ((low_first > 0) & (high_first > 0)) | (keys[1] == keys[2])
    margin = data.score[first] - data.score[later]
    keep = both[pair_of] & (margin != 0)
    swaps = distinct(found.swap_group[found.swap_group >= 0]).size
    return Judgments(session[keep], data.reviewer[first][keep], (margin[keep] > 0).astype(np.float64),
                     int(both.sum()), swaps, found.unresolved)


def _pairs_within_calls(data: ScoreData, call: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every two records of one call: (shown earlier, shown later) record indices."""
    in_call = np.flatnonzero(call >= 0)
    order = in_call[sort_order(call[in_call], data.slot[in_call])]
    of = call[order]
    longest = int(np.unique(of, return_counts=True)[1].max(initial=1)) if len(of) else 1
    first, later = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for step in range(1, longest):
        same = of[:-step] == of[step:]
        first.append(order[:-step][same])
        later.append(order[step:][same])
    return np.concatenate(first), np.concatenate(later)


def first_shown_share(judgments: Judgments, level: float = 0.95) -> Estimate:
    """The share of decided judgments won by the first-shown answer, its p-value testing
    share = 0.5 (no position effect). Judgments of one session share answers and reviewers,
    so the SE is clustered by session (CR1, t with G-1 df); CI and p-value come from that one
    SE and t, so the CI leaves out 0.5 exactly when p < 1 - level."""
    return clustered_share(judgments.first_won, judgments.session, level, null=NO_POSITION_EFFECT)
