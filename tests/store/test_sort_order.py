"""The writer's sorts (session statistics, day totals, the score rows' key order): integer
keys sorted as one number give exactly the order and groups that ``np.lexsort`` gives."""

from __future__ import annotations

import numpy as np
import pytest

from council_db.integer_keys import sort_order
from council_db.store.session_stats import groups


def _lexsorted_groups(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort(keys[::-1])
    new = np.zeros(len(order), dtype=bool)
    new[0] = True
    for key in keys:
        new[1:] |= key[order][1:] != key[order][:-1]
    group = np.empty(len(order), dtype=np.int64)
    group[order] = np.cumsum(new) - 1
    return group, order[new]


@pytest.mark.parametrize("seed", range(6))
def test_integer_keys_sort_and_group_as_lexsort_does(seed):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 3_000))
    keys = (rng.integers(-5, 40, count).astype(np.int32), rng.integers(0, 4, count), rng.random(count) < 0.5,
            rng.integers(1, 10**6, count))
    assert np.array_equal(sort_order(*keys), np.lexsort(keys[::-1]))
    for found, expected in zip(groups(*keys), _lexsorted_groups(*keys)):
        assert np.array_equal(found, expected)


def test_keys_too_wide_for_one_number_or_not_integers_still_sort_as_lexsort_does():
    rng = np.random.default_rng(1)
    wide = (rng.integers(0, 2**40, 500), rng.integers(0, 2**40, 500))
    floats = (rng.integers(0, 3, 500), rng.integers(0, 5, 500) / 2.0)
    for keys in (wide, floats):
        assert np.array_equal(sort_order(*keys), np.lexsort(keys[::-1]))
