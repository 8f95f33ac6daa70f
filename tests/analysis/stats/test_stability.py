"""The repeat-stability estimators against their textbook definitions, computed here the slow
way (a loop over items, every pair spelled out) on unbalanced data."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from council_db.analysis.stats.agreement import repeat_pairs
from council_db.analysis.stats.stability import repeat_items, stability


def unbalanced(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """60 items with 1 to 5 repeats each (whole scores 1-10), in 20 sessions, shuffled."""
    rng = np.random.default_rng(seed)
    k = rng.integers(1, 6, size=60)
    item = np.repeat(np.arange(60), k)
    score = np.clip(np.rint(6 + rng.normal(0, 1.5, 60)[item] + rng.normal(0, 1, len(item))), 1, 10)
    order = rng.permutation(len(item))
    return item[order], score[order], (np.arange(60) % 20)


def test_icc1_and_the_within_item_sd_are_the_one_way_anovas():
    item, score, session_of = unbalanced()
    groups = [score[item == i] for i in range(60) if (item == i).sum() >= 2]
    a, n = len(groups), sum(len(g) for g in groups)
    grand = np.concatenate(groups).mean()
    msb = sum(len(g) * (g.mean() - grand) ** 2 for g in groups) / (a - 1)
    ssw = sum(((g - g.mean()) ** 2).sum() for g in groups)
    msw = ssw / (n - a)
    k0 = (n - sum(len(g) ** 2 for g in groups) / n) / (a - 1)

    items = repeat_items(item, score, score > 5.5)
    found = stability([(items, session_of[item[items.first]])], 20, 200, np.random.default_rng(1))[0]

    assert found.icc.estimate == pytest.approx((msb - msw) / (msb + (k0 - 1) * msw))
    assert found.within_sd.estimate == pytest.approx(np.sqrt(msw))
    assert found.identical.estimate == pytest.approx(np.mean([len(set(g)) == 1 for g in groups]))
    assert found.icc.ci_low < found.icc.estimate < found.icc.ci_high and found.icc.n_sessions == 20


def test_repeat_pairs_sums_every_pair_within_each_group():
    item, score, _ = unbalanced(3)
    found = repeat_pairs(item, score)
    for first, pairs, identical, absolute in zip(found.first, found.pairs, found.identical, found.absolute):
        members = score[item == item[first]]
        every = list(itertools.combinations(members.tolist(), 2))
        assert (pairs, identical) == (len(every), sum(a == b for a, b in every))
        assert absolute == pytest.approx(sum(abs(a - b) for a, b in every))
    assert len(found.first) == sum((item == i).sum() >= 2 for i in range(60))
