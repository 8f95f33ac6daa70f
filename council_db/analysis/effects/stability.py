"""Repeat stability per judge: where one reviewer scored the same answer (session, candidate,
length, which must be known: see agreement.self_consistency) k >= 2 times, as Inspect's
epochs, re-runs and llm-council repeats do. The figures are analysis/stats/stability's; here
the window's records become items, the pass threshold comes from the scale, and the least
stable items are picked out for a reader to look at."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from council_db.analysis.loading.score_data import ScoreData, keep_records, known_lengths
from council_db.analysis.stats.answers import answer_index
from council_db.analysis.stats.bootstrap import RngLike
from council_db.analysis.stats.stability import RepeatItems, Stability, repeat_items, stability
from council_db.contract.scales import score_scale

LEAST_STABLE = 5  # items listed per judge


def pass_threshold(scale: str) -> float:
    """A score passes above the scale's midpoint: 6+ of 1-10, 4+ of 1-5, 1 of 0-1 (Inspect's
    C, not its P at 0.5: pass^k counts correct answers)."""
    parsed = score_scale(scale)
    return (parsed.low + parsed.high) / 2.0


@dataclass(frozen=True)
class UnstableItem:
    session: int
    model: int
    scores: list[float]


@dataclass(frozen=True)
class JudgeStability:
    reviewer: str
    items: int  # answers it scored at least twice
    records: int  # its scores of them
    k_counts: dict[int, int]  # repeats -> items
    figures: Stability
    least_stable: list[UnstableItem]


def _least_stable(items: RepeatItems, session: np.ndarray, model: np.ndarray, item: np.ndarray,
                  score: np.ndarray) -> list[UnstableItem]:
    """The items with the widest range of scores (the larger within-item SD first on a tie),
    at most LEAST_STABLE, and only those whose repeats differ."""
    spread = items.high - items.low
    sd = np.sqrt(np.maximum(items.squares - items.total ** 2 / items.k, 0.0) / (items.k - 1))
    order = np.lexsort((-sd, -spread))[:LEAST_STABLE]
    order = order[spread[order] > 0]
    return [UnstableItem(int(session[items.first[i]]), int(model[items.first[i]]),
                         score[item == item[items.first[i]]].tolist()) for i in order.tolist()]


def repeat_stability(data: ScoreData, n_boot: int = 1000, rng: RngLike = None,
                     level: float = 0.95) -> list[JudgeStability]:
    """Each reviewer that scored an answer more than once, its stability figures; empty when
    none did. ``data``: the records to read (swapped pairs' two orders already left out)."""
    data = keep_records(data, known_lengths(data))
    if data.n_records == 0:
        return []
    answer, _ = answer_index(data.session, data.model, data.log_length)
    passed = data.score > pass_threshold(data.scale)
    judges = []
    for r, name in enumerate(data.reviewers):
        mine = np.flatnonzero(data.reviewer == r)
        items = repeat_items(answer[mine], data.score[mine], passed[mine])
        if len(items):
            judges.append((name, mine, items))
    if not judges:
        return []
    found = stability([(items, data.session[mine][items.first]) for _, mine, items in judges], data.n_sessions,
                      n_boot, rng, level)
    out = []
    for (name, mine, items), figures in zip(judges, found):
        ks, counts = np.unique(items.k, return_counts=True)
        out.append(JudgeStability(
            reviewer=name, items=len(items), records=int(items.k.sum()),
            k_counts=dict(zip(ks.tolist(), counts.tolist())), figures=figures,
            least_stable=_least_stable(items, data.session[mine], data.model[mine], answer[mine], data.score[mine])))
    return out
