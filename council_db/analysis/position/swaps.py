"""Swap designs: one reviewer scored the same two answers in both orders in one session
(``calls``: {A@s, B@t} and {B@s, A@t}). As the position-bias literature reports them (Zheng et
al. 2023, MT-bench; Shi et al. 2024, "Judging the Judges"), each swapped pair is

* consistent: the same answer preferred in both orders (a tie in both counts: no preference);
* primacy: the answer shown first preferred in both orders (so the preference flipped with it);
* recency: the answer shown second preferred in both orders;
* one tie: a preference in one order, a tie in the other.

Position consistency is the consistent share; among the flipped pairs, the share that flipped
towards the first-shown answer says which way the reviewer leans (0.5: no lean).
"""

from __future__ import annotations

import msgspec
import numpy as np

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.position.calls import calls
from council_db.analysis.stats import Estimate, clustered_share
from council_db.analysis.stats.unique_rows import distinct
from council_db.integer_keys import sort_order

CONSISTENT, PRIMACY, RECENCY, ONE_TIE = range(4)


class Swaps(msgspec.Struct, frozen=True):
    session: np.ndarray  # per swapped pair
    reviewer: np.ndarray
    outcome: np.ndarray  # CONSISTENT, PRIMACY, RECENCY or ONE_TIE


class SwapSummary(msgspec.Struct, frozen=True):
    swaps: int
    consistent: Estimate  # share with the same preference in both orders, CI clustered by session
    primacy: int
    recency: int
    one_tie: int
    first_preferred: Estimate  # primacy / (primacy + recency); p_value tests 0.5
    n_sessions: int


def swaps(data: ScoreData) -> Swaps:
    """Every swapped pair with its outcome."""
    group = calls(data).swap_group
    rows = np.flatnonzero(group >= 0)
    rows = rows[sort_order(group[rows], data.slot[rows], data.model[rows])].reshape(-1, 4)
    score = data.score[rows]  # columns: A@s, B@s, A@t, B@t
    a_first = np.sign(score[:, 0] - score[:, 3])  # call {A@s, B@t}: + when the first-shown A won
    b_first = np.sign(score[:, 1] - score[:, 2])  # call {B@s, A@t}: + when the first-shown B won
    outcome = np.full(len(rows), ONE_TIE, dtype=np.int64)
    outcome[a_first == -b_first] = CONSISTENT
    outcome[(a_first > 0) & (b_first > 0)] = PRIMACY
    outcome[(a_first < 0) & (b_first < 0)] = RECENCY
    return Swaps(data.session[rows[:, 0]], data.reviewer[rows[:, 0]], outcome)


def summarise(found: Swaps, keep: np.ndarray | None = None) -> SwapSummary | None:
    """Counts and shares over the swapped pairs ``keep`` selects (a mask or their positions in
    order; all when None); None if none."""
    session, outcome = (found.session, found.outcome) if keep is None else (found.session[keep], found.outcome[keep])
    if len(outcome) == 0:
        return None
    counts = np.bincount(outcome, minlength=4)
    flipped = (outcome == PRIMACY) | (outcome == RECENCY)
    return SwapSummary(
        swaps=len(outcome), consistent=clustered_share(outcome == CONSISTENT, session),
        primacy=int(counts[PRIMACY]), recency=int(counts[RECENCY]), one_tie=int(counts[ONE_TIE]),
        first_preferred=clustered_share(outcome[flipped] == PRIMACY, session[flipped], null=0.5),
        n_sessions=len(distinct(session)))
