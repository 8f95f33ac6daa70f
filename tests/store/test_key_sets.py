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


def test_an_exact_key_set_grows_by_a_batchs_distinct_keys_not_its_rows():
    sessions = KeySet(2)
    for _ in range(20):  # each of 160 sessions' scale, once per record, in 20 batches
        sessions.add([np.repeat(np.arange(160), 100), np.ones(16_000, dtype=np.int64)])
    assert len(sessions) == 20 * 160, "a batch's 160 distinct keys, not its 16,000 rows"
