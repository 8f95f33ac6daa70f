"""Sets of integer keys (a few int64 columns a key) tested and grown a batch at a time.

The day totals keep, for the sessions an import adds to batch after batch, which keys are
stored already (store/stored_keys.py). A Python set of tuples would cost ~150 bytes a key;
here a key is a 64-bit hash in sorted numpy runs, beside its columns where a hash match
must be checked (``exact``), or alone where the caller checks a match itself. The runs merge
like a binary counter, so a batch's work grows with the log of the set's size, not its size.
"""

from __future__ import annotations

import numpy as np

_MULTIPLIERS = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93],
                        dtype=np.uint64)


def key_hashes(columns: list[np.ndarray]) -> np.ndarray:
    """A 64-bit hash of each row of the columns (at most four), mixed by splitmix64's finaliser."""
    mixed = np.zeros(len(columns[0]), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for multiplier, column in zip(_MULTIPLIERS, columns):
            mixed = (mixed ^ column.astype(np.uint64)) * multiplier
            mixed ^= mixed >> np.uint64(31)
    return mixed


class KeySet:
    """Keys of ``width`` int64 columns. ``exact``: a match is the key itself (its columns
    are kept); otherwise a match is a key with the same hash (a candidate the caller checks)."""

    def __init__(self, width: int, *, exact: bool = True):
        self.width, self.exact = width, exact
        self.runs: list[tuple[np.ndarray, np.ndarray | None]] = []  # (sorted hashes, their keys: width x keys)

    def __len__(self) -> int:
        return sum(len(hashes) for hashes, _ in self.runs)

    def contains(self, columns: list[np.ndarray]) -> np.ndarray:
        """Per row of the columns: its key is in the set."""
        hashes = key_hashes(columns)
        order = np.argsort(hashes)  # searched in order: a run is read forward, not all over
        wanted, found = hashes[order], np.zeros(len(order), dtype=bool)
        asked = np.stack([np.asarray(column, dtype=np.int64)[order] for column in columns]) if self.exact else None
        for hashes, keys in self.runs:
            at = np.minimum(np.searchsorted(hashes, wanted), len(hashes) - 1)
            hit = np.flatnonzero((hashes[at] == wanted) & ~found)
            if keys is None:
                found[hit] = True
                continue
            same = (keys[:, at[hit]] == asked[:, hit]).all(axis=0)  # the first key of the hash, nearly always it
            found[hit[same]] = True
            for row in hit[~same]:  # two keys of one hash: the others of the hash
                ends = np.searchsorted(hashes, wanted[row], side="right")
                found[row] = bool((keys[:, at[row]:ends] == asked[:, row:row + 1]).all(axis=0).any())
        in_given_order = np.empty_like(found)
        in_given_order[order] = found
        return in_given_order

    def add(self, columns: list[np.ndarray]) -> None:
        """Add the keys. An exact set adds a batch's distinct keys (a session's few reviewers
        once, not once a record); a hash-only set adds them all (its caller gives keys it lacks)."""
        if not len(columns[0]):
            return
        keys = np.stack([np.asarray(column, dtype=np.int64) for column in columns]) if self.exact else None
        hashes, keys = _sorted(key_hashes(columns), keys)
        if keys is not None:  # each key once: a repeat follows its first in hash order (a collision aside)
            first = np.concatenate([[True], (hashes[1:] != hashes[:-1]) | (keys[:, 1:] != keys[:, :-1]).any(axis=0)])
            hashes, keys = hashes[first], keys[:, first]
        self.runs.append((hashes, keys))
        while len(self.runs) > 1 and len(self.runs[-2][0]) <= 2 * len(self.runs[-1][0]):
            second = self.runs.pop()
            self.runs.append(_merged(self.runs.pop(), second))


def _sorted(hashes: np.ndarray, keys: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """A run: the hashes sorted, and the keys' columns (width x keys) in their order."""
    order = np.argsort(hashes, kind="stable")
    return hashes[order], None if keys is None else keys[:, order]


def _merged(first: tuple[np.ndarray, np.ndarray | None],
            second: tuple[np.ndarray, np.ndarray | None]) -> tuple[np.ndarray, np.ndarray | None]:
    """Two runs as one, each placed by a search in the other (no sort of the whole)."""
    (hashes, keys), (other, other_keys) = first, second
    from_other = np.zeros(len(hashes) + len(other), dtype=bool)
    from_other[np.searchsorted(hashes, other, side="right") + np.arange(len(other))] = True
    merged = np.empty(len(from_other), dtype=np.uint64)
    merged[from_other], merged[~from_other] = other, hashes
    if keys is None:
        return merged, None
    merged_keys = np.empty((keys.shape[0], len(from_other)), dtype=np.int64)
    merged_keys[:, from_other], merged_keys[:, ~from_other] = other_keys, keys
    return merged, merged_keys
