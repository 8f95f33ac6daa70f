"""Which records a reviewer saw together in one call (one prompt with several answers).

The store keeps one score per (session, reviewer, candidate, display slot), not the call, so
calls are read off the slots of one reviewer in one session:

* every slot used once: one call, the answers in slot order (the usual case; one candidate in
  two slots is one answer shown twice, as FastChat's GPT-3.5 run does);
* two candidates, each in the same two slots (A@s, B@t, B@s, A@t): a swap design, two calls
  {A@s, B@t} and {B@s, A@t} (a call shows two different answers);
* anything else with a repeated slot (three or more answers shown in several orders) cannot
  be split into calls from the slots alone: those records are left out of the pair analyses
  and counted (``Calls.unresolved``).
"""

from __future__ import annotations

import msgspec
import numpy as np

from council_db.analysis.loading.score_data import ScoreData
from council_db.integer_keys import sort_order


class Calls(msgspec.Struct):
    call: np.ndarray  # per record: its call number, -1 when not a display slot or unresolved
    swap_group: np.ndarray  # per record: its swap number (two calls of one pair), -1 when not in a swap
    unresolved: int  # (session, reviewer) groups with repeated slots that are not a two-answer swap


def calls(data: ScoreData) -> Calls:
    """Every display-slot record's call, by the rules in the module docstring."""
    call = np.full(data.n_records, -1, dtype=np.int64)
    swap_group = np.full(data.n_records, -1, dtype=np.int64)
    shown = np.flatnonzero(data.slot >= 0)
    if len(shown) == 0:
        return Calls(call, swap_group, 0)
    order = shown[sort_order(data.session[shown], data.reviewer[shown], data.slot[shown], data.model[shown])]
    key = data.session[order] * (len(data.reviewers) + 1) + data.reviewer[order]
    new = np.r_[True, key[1:] != key[:-1]]
    group = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    size = np.diff(np.r_[starts, len(order)])
    slot = data.slot[order]
    new_slot = new | np.r_[True, slot[1:] != slot[:-1]]
    slots = np.bincount(group, weights=new_slot).astype(np.int64)
    one_call = slots == size
    swap = _two_answer_swaps(data, order, starts, size, slots)
    within = np.arange(len(order)) - starts[group]
    call[order[one_call[group]]] = 2 * group[one_call[group]]
    in_swap = swap[group]
    # sorted by slot then candidate: A@s, B@s, A@t, B@t; calls {A@s, B@t} and {B@s, A@t}
    second_call = (within == 1) | (within == 2)
    call[order[in_swap]] = 2 * group[in_swap] + second_call[in_swap]
    swap_group[order[in_swap]] = group[in_swap]
    return Calls(call, swap_group, int((~one_call & ~swap).sum()))


def _two_answer_swaps(data: ScoreData, order: np.ndarray, starts: np.ndarray, size: np.ndarray,
                      slots: np.ndarray) -> np.ndarray:
    """Groups of four records in two slots whose candidates read A, B, A, B (A != B)."""
    swap = (size == 4) & (slots == 2)
    at = starts[swap]
    model = data.model[order]
    swap[swap] = (model[at] != model[at + 1]) & (model[at] == model[at + 2]) & (model[at + 1] == model[at + 3])
    return swap
