"""The hierarchical model's sufficient statistics: the cross products [Z X y]'[Z X y] of the
within-session design, summed block by block over runs of whole sessions, so the cost is
linear in the records and the memory one block's design. Summed up to each cut point, they
are the statistics of the window as it stood after that session (``updating``)."""

from __future__ import annotations

import numpy as np

from council_db.analysis.hierarchical.terms import Terms

BLOCK_RECORDS = 32_768  # records per block at most
BLOCK_CELLS = 1 << 22  # and at most this many cells (32 MB of float64): a wide panel gets shorter blocks


def cumulative(terms: Terms, cuts: list[int]) -> list[np.ndarray]:
    """The cross products of the records in the first ``cut`` sessions, for each cut (session
    counts, increasing; the ScoreData's session numbers)."""
    session_ends = np.searchsorted(terms.session, np.asarray(cuts), side="left")
    out, total, done = [], np.zeros((terms.q + terms.p + 1,) * 2), 0
    for end in session_ends.tolist():
        total = total + _sum(terms, done, end)
        out.append(total.copy())
        done = end
    return out


def cross_products(terms: Terms) -> np.ndarray:
    """The cross products of every record the model uses."""
    return _sum(terms, 0, len(terms.rows))


def _sum(terms: Terms, start: int, stop: int) -> np.ndarray:
    """Cross products of records start..stop, in blocks that end on a unit's last record."""
    width = terms.q + terms.p + 1
    total = np.zeros((width, width))
    block = max(1, min(BLOCK_RECORDS, BLOCK_CELLS // width))
    while start < stop:
        end = min(start + block, stop)
        if end < stop:  # move the end back to a session boundary: a unit never straddles blocks
            end = int(np.searchsorted(terms.session, terms.session[end], side="left"))
            if end <= start:
                end = int(np.searchsorted(terms.session, terms.session[start], side="right"))
        w = terms.design(start, end)
        # einsum, not w.T @ w: BLAS's threads, on a machine whose cores are busy, took 130 ms
        # for a block of 1,632 records x 38 columns that one thread sums in 1 ms
        total += np.einsum("ij,ik->jk", w, w)
        start = end
    return total
