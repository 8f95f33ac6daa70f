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
        wanted, found = key_hashes(columns), np.zeros(len(columns[0]), dtype=bool)
        asked = np.stack([np.asarray(column, dtype=np.int64) for column in columns]) if self.exact else None
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
        return found

    def add(self, columns: list[np.ndarray]) -> None:
        """Add the keys (one already in the set is held twice: no harm to ``contains``)."""
        if not len(columns[0]):
            return
        keys = np.stack([np.asarray(column, dtype=np.int64) for column in columns]) if self.exact else None
        self.runs.append(_sorted(key_hashes(columns), keys))
        while len(self.runs) > 1 and len(self.runs[-2][0]) <= 2 * len(self.runs[-1][0]):
            (first, first_keys), (second, second_keys) = self.runs.pop(-2), self.runs.pop()
            self.runs.append(_sorted(np.concatenate([first, second]),
                                     None if first_keys is None else np.concatenate([first_keys, second_keys], axis=1)))


def _sorted(hashes: np.ndarray, keys: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """A run: the hashes sorted, and the keys' columns (width x keys) in their order."""
    order = np.argsort(hashes, kind="stable")
    return hashes[order], None if keys is None else keys[:, order]
