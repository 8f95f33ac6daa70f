"""The key sets the day totals keep of stored sessions (store/key_sets.py): exactly the keys
added, batch after batch, even where two keys share a hash; a hash-only set finds every key
added (its caller confirms a match)."""

from __future__ import annotations

import numpy as np
import pytest

from council_db.store import key_sets
from council_db.store.key_sets import KeySet


def batches(seed: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [[rng.integers(-3, 40, size) for _ in range(3)] for size in rng.integers(0, 300, 12)]


@pytest.mark.parametrize("weak_hash", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_a_key_set_holds_exactly_the_keys_added_across_batches(seed, weak_hash, monkeypatch):
    if weak_hash:  # every key of one row sum shares a hash: matches must be told apart by the keys
        monkeypatch.setattr(key_sets, "key_hashes", lambda columns: sum(columns).astype(np.uint64))
    exact, hashed, added = KeySet(3), KeySet(3, exact=False), set()
    for batch in batches(seed):
        keys = list(zip(*(column.tolist() for column in batch)))
        assert exact.contains(batch).tolist() == [key in added for key in keys]
        assert hashed.contains(batch)[[key in added for key in keys]].all()
        exact.add(batch)
        hashed.add(batch)
        added.update(keys)
    assert len(exact.runs) <= 1 + np.log2(max(len(exact), 1)), "runs merge: a test costs log(size) searches"
