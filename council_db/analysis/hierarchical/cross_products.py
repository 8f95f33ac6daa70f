"""The hierarchical model's sufficient statistics: the cross products [Z X y]'[Z X y] of the
within-session design, summed block by block over runs of whole sessions, so the cost is
linear in the records and the memory one block's design. Summed up to each cut point, they
are the statistics of the window as it stood after that session (``updating``).

Every reviewer of an answer sees the same answer, so its own quality is shared by all its
scores: an answer effect with variance rho x sigma^2 (``reml``). Integrating it out weights
each answer's mean row of the design by 1 / (1 + rho m), m its scores: the cross products at
rho are W'W - sum over answers of rho / (1 + rho m) s s', s the answer's sum of rows
(``weighted``); ``Strata`` keeps W'W and the answers' part per m, so REML can try any rho
from one pass."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from council_db.analysis.hierarchical.terms import Terms

BLOCK_RECORDS = 4_096  # records per block at most: a block's design and its copies stay near 5 MB
BLOCK_CELLS = 1 << 22  # and at most this many cells (32 MB of float64): a wide panel gets shorter blocks
SNAPSHOT_BYTES = 64 << 20  # the strata kept at every cut point, at most (a 4 x 4 council's: 3 MB)


@dataclass
class Strata:
    """A window's cross products W'W, and per answer size m the sum over answers with m
    scores of s s' / m (s the answer's sum of design rows): the between-answer part."""

    total: np.ndarray
    between: dict[int, np.ndarray]

    def weighted(self, rho: float) -> np.ndarray:
        return weighted(self.total, self.between, rho)


def weighted(total: np.ndarray, between: dict[int, np.ndarray], rho: float) -> np.ndarray:
    """The cross products with the answer effects (variance rho x sigma^2) integrated out."""
    out = total.copy()
    for m, part in between.items():
        out -= rho * m / (1.0 + rho * m) * part
    return out


def strata(terms: Terms) -> Strata:
    """The whole window's ``Strata``."""
    return Strata(*_strata_sum(terms, 0, len(terms.rows)))


def cumulative_strata(terms: Terms, cuts: list[int]) -> list[Strata] | None:
    """The ``Strata`` of the records in the first ``cut`` sessions, for each cut, from the one
    pass (the cross products at any rho then need no second one); None where keeping them all
    would pass SNAPSHOT_BYTES (a wide panel with many answer sizes: ``cumulative`` instead)."""
    sizes = np.unique(terms.answer_sizes()[0])
    if len(cuts) * (1 + len(sizes)) * (terms.q + terms.p + 1) ** 2 * 8 > SNAPSHOT_BYTES:
        return None
    session_ends = np.searchsorted(terms.session, np.asarray(cuts), side="left")
    out, done = [], 0
    total, between = np.zeros((terms.q + terms.p + 1,) * 2), {}
    for end in session_ends.tolist():
        part, parts = _strata_sum(terms, done, end)
        total = total + part
        between = {m: between.get(m, 0.0) + parts.get(m, 0.0) for m in {*between, *parts}}
        out.append(Strata(total, between))
        done = end
    return out


def _strata_sum(terms: Terms, start: int, stop: int) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """W'W and the between-answer part per answer size of records start..stop."""
    width = terms.q + terms.p + 1
    total, between = np.zeros((width, width)), {}
    for begin, end in _blocks(terms, start, stop):
        w = terms.design(begin, end)
        total += np.einsum("ij,ik->jk", w, w)
        sums, sizes = _answer_sums(terms, begin, end, w)
        for m in np.unique(sizes).tolist():
            part = sums[sizes == m]
            between[m] = between.get(m, 0.0) + np.einsum("ij,ik->jk", part, part) / m
    return total, between


def cumulative(terms: Terms, cuts: list[int], rho: float = 0.0) -> list[np.ndarray]:
    """The cross products at ``rho`` of the records in the first ``cut`` sessions, for each cut
    (session counts, increasing; the ScoreData's session numbers)."""
    session_ends = np.searchsorted(terms.session, np.asarray(cuts), side="left")
    out, total, done = [], np.zeros((terms.q + terms.p + 1,) * 2), 0
    for end in session_ends.tolist():
        total = total + _sum(terms, done, end, rho)
        out.append(total.copy())
        done = end
    return out


def cross_products(terms: Terms, rho: float = 0.0) -> np.ndarray:
    """The cross products at ``rho`` of every record the model uses."""
    return _sum(terms, 0, len(terms.rows), rho)


def _sum(terms: Terms, start: int, stop: int, rho: float) -> np.ndarray:
    """Cross products at ``rho`` of records start..stop."""
    width = terms.q + terms.p + 1
    total = np.zeros((width, width))
    for begin, end in _blocks(terms, start, stop):
        w = terms.design(begin, end)
        # einsum, not w.T @ w: BLAS's threads, on a machine whose cores are busy, took 130 ms
        # for a block of 1,632 records x 38 columns that one thread sums in 1 ms (and a program
        # that imported numpy before council_db has them: 6 s for this fit at 5,000 sessions)
        total += np.einsum("ij,ik->jk", w, w)
        if rho > 0:
            sums, sizes = _answer_sums(terms, begin, end, w)
            scaled = sums * np.sqrt(rho / (1.0 + rho * sizes))[:, None]
            total -= np.einsum("ij,ik->jk", scaled, scaled)
    return total


def _blocks(terms: Terms, start: int, stop: int):
    """Runs start..end of records start..stop, each ending on a unit's last record."""
    block = max(1, min(BLOCK_RECORDS, BLOCK_CELLS // (terms.q + terms.p + 1)))
    while start < stop:
        end = min(start + block, stop)
        if end < stop:  # move the end back to a session boundary: a unit never straddles blocks
            end = int(np.searchsorted(terms.session, terms.session[end], side="left"))
            if end <= start:
                end = int(np.searchsorted(terms.session, terms.session[start], side="right"))
        yield start, end
        start = end


def _answer_sums(terms: Terms, start: int, stop: int, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each answer's sum of the block's design rows and its number of scores (none without answers)."""
    answer = terms.answer[start:stop]
    if not len(answer) or answer[0] < 0:
        return np.zeros((0, w.shape[1])), np.zeros(0, dtype=np.int64)
    local = answer - answer.min()  # answers are numbered by unit: a block's are a contiguous run
    sizes = np.bincount(local)
    sums = np.column_stack([np.bincount(local, weights=column, minlength=len(sizes)) for column in w.T])
    return sums, sizes
