"""The joint model's within-session design as a matrix-free operator, for panels too wide for a
dense N x P design (issue 32: 50,000 reviewers).

Each record touches one reviewer column and one candidate column, a few display-slot codes,
its reviewer's self term (a self-review) and the length slopes (the common one and its
reviewer's effect-coded deviation), so the design times a vector is a handful of gathers and
its transpose a handful of ``np.bincount`` sums: O(N) each, never O(N x P). The reviewers and
candidates are dummy coded (their effect codes and group offsets span the same columns once
the session effects are absorbed; a contrast reads effects the same way), the other columns
coded as joint_design codes them. ``solve`` runs Jacobi-preconditioned conjugate gradients on
the normal equations X'X u = b for several right-hand sides at once (one pass over the records
serves them all).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TOLERANCE = 1e-11  # relative residual of the normal equations at which a solve stops (rounding's floor
# on a 50,000-reviewer panel is ~1e-12; past it the iterates drift off along X'X's null space)
IDENTIFIED = 1e-8  # a solve that stalls above this relative residual had a contrast the design cannot identify
STALL = 50  # iterations over which a solve must gain a factor 10 to go on
MAX_ITERATIONS = 3000
CELLS = 2 ** 21  # records x right-hand sides of one batch (16 MB an array)


def per_level(index: np.ndarray, values: np.ndarray, n: int, cells: np.ndarray | None = None) -> np.ndarray:
    """Sums of ``values`` (N, or N x b) by ``index``: n, or n x b, in one bincount (``cells``:
    ``flat_cells(index, b)``, when the caller keeps them)."""
    if values.ndim == 1:
        return np.bincount(index, weights=values, minlength=n)
    b = values.shape[1]
    cells = flat_cells(index, b) if cells is None else cells
    return np.bincount(cells, weights=values.ravel(), minlength=n * b).reshape(n, b)


def flat_cells(index: np.ndarray, b: int) -> np.ndarray:
    """Each (record, column) cell's bin for sums by ``index`` of an N x b array."""
    return (index[:, None] * b + np.arange(b)).ravel()


def effect_coded(values: np.ndarray, members: np.ndarray, n: int) -> np.ndarray:
    """Per level (n, or n x b): ``values`` for members but the last, minus their sum for the
    last, 0 for the rest (sum-to-zero coding over ``members``)."""
    out = np.zeros((n,) + values.shape[1:])
    if len(members) > 1:
        out[members[:-1]] = values
        out[members[-1]] = -values.sum(axis=0)
    return out


def _cell_norms(level: np.ndarray, unit: np.ndarray, x: np.ndarray, size: np.ndarray, n: int) -> np.ndarray:
    """Each level's column (x on its records) squared norm once demeaned within units:
    sum over its units of sum x^2 - (sum x)^2 / n_unit."""
    cell, code = np.unique(level * len(size) + unit, return_inverse=True)
    total, square = np.bincount(code, weights=x), np.bincount(code, weights=x * x)
    return np.bincount(cell // len(size), weights=square - total ** 2 / size[cell % len(size)], minlength=n)


@dataclass
class Absorbed:
    """X (demeaned within units) as an operator over [reviewers | candidates | slot codes | self
    terms | common length slope | length deviations]."""

    unit: np.ndarray  # each record's fixed-effect group (a session, or a session x reviewer)
    size: np.ndarray  # records per unit
    rev: np.ndarray
    mod: np.ndarray
    n_rev: int
    n_mod: int
    slot_x: np.ndarray  # N x (K - 1): display-slot effect codes (joint_design's)
    own: np.ndarray  # bool: a self-review
    self_reviewers: np.ndarray  # reviewers with a self term, in column order
    log_len: np.ndarray  # centred within units, 0 where unknown
    length_reviewers: np.ndarray  # reviewers with a slope of their own (deviation effect coded)

    def __post_init__(self) -> None:
        k = len(self.length_reviewers)
        widths = [self.n_rev, self.n_mod, self.slot_x.shape[1], len(self.self_reviewers), 1, max(k - 1, 0)]
        self.starts = np.concatenate([[0], np.cumsum(widths)]).astype(int)
        self.width = int(self.starts[-1])
        self._cells: dict[tuple[str, int], np.ndarray] = {}
        # the records of the reviewers with a slope of their own, and each one's place among them:
        # their deviations read and sum those records alone, not a column per reviewer of the panel
        self._sloped = np.flatnonzero(np.isin(self.rev, self.length_reviewers)) if k > 1 else np.zeros(0, dtype=int)
        place = np.zeros(self.n_rev, dtype=np.int64)
        place[self.length_reviewers] = np.arange(k)
        self._slope_of = place[self.rev[self._sloped]]
        self.diagonal = self._diagonal()

    def block(self, theta: np.ndarray, number: int) -> np.ndarray:
        return theta[self.starts[number]:self.starts[number + 1]]

    def _sums(self, name: str, values: np.ndarray, n: int) -> np.ndarray:
        """per_level by one of the operator's index arrays, its cells kept for the batch's width."""
        index = getattr(self, name)
        if values.ndim == 1:
            return per_level(index, values, n)
        key = (name, values.shape[1])
        if key not in self._cells:
            self._cells = {k: v for k, v in self._cells.items() if k[1] == key[1]}  # one width at a time
            self._cells[key] = flat_cells(index, values.shape[1])
        return per_level(index, values, n, self._cells[key])

    def demean(self, v: np.ndarray) -> np.ndarray:
        means = self._sums("unit", v, len(self.size))
        return v - (means / (self.size if v.ndim == 1 else self.size[:, None]))[self.unit]

    def apply(self, theta: np.ndarray) -> np.ndarray:
        """X theta: N (or N x b for P x b coefficients), demeaned within units."""
        log_len = self.log_len[:, None] if theta.ndim == 2 else self.log_len
        v = self.block(theta, 0)[self.rev] + self.block(theta, 1)[self.mod] + log_len * self.block(theta, 4)[0]
        if self.slot_x.shape[1]:
            v += self.slot_x @ self.block(theta, 2)
        if len(self.self_reviewers):
            self_value = np.zeros((self.n_rev,) + theta.shape[1:])
            self_value[self.self_reviewers] = self.block(theta, 3)
            v[self.own] += self_value[self.rev[self.own]]
        k, at = len(self.length_reviewers), self._sloped
        if k > 1:
            v[at] += log_len[at] * effect_coded(self.block(theta, 5), np.arange(k), k)[self._slope_of]
        return self.demean(v)

    def transposed(self, w: np.ndarray) -> np.ndarray:
        """X'w for w demeaned within units (N or N x b): P (or P x b)."""
        log_len = self.log_len[:, None] if w.ndim == 2 else self.log_len
        k, at, empty = len(self.length_reviewers), self._sloped, np.zeros((0,) + w.shape[1:])
        deviations = empty
        if k > 1:
            by_length = per_level(self._slope_of, log_len[at] * w[at], k)
            deviations = by_length[:-1] - by_length[-1]
        own = per_level(self.rev[self.own], w[self.own], self.n_rev)[self.self_reviewers] \
            if len(self.self_reviewers) else empty
        return np.concatenate([self._sums("rev", w, self.n_rev), self._sums("mod", w, self.n_mod),
                               self.slot_x.T @ w, own, (log_len * w).sum(axis=0)[None], deviations])

    def _diagonal(self) -> np.ndarray:
        """X'X's diagonal, the preconditioner (a length deviation's: its two reviewers' own
        parts, their shared sessions' cross term left out: a preconditioner need not be exact)."""
        ones, slot_x = np.ones(len(self.rev)), self.demean(self.slot_x) if self.slot_x.shape[1] else self.slot_x
        length = _cell_norms(self.rev, self.unit, self.log_len, self.size, self.n_rev)
        own = _cell_norms(self.rev[self.own], self.unit[self.own], ones[self.own], self.size, self.n_rev)
        members = self.length_reviewers
        deviations = length[members[:-1]] + length[members[-1]] if len(members) > 1 else np.zeros(0)
        diagonal = np.concatenate([
            _cell_norms(self.rev, self.unit, ones, self.size, self.n_rev),
            _cell_norms(self.mod, self.unit, ones, self.size, self.n_mod), (slot_x ** 2).sum(axis=0),
            own[self.self_reviewers], [float(self.demean(self.log_len) @ self.log_len)], deviations])
        return np.where(diagonal > 0, diagonal, 1.0)

    def batch(self) -> int:
        """Right-hand sides solved together: CELLS records x sides."""
        return max(1, min(512, CELLS // max(len(self.rev), 1)))

    def solve(self, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """u with X'X u = b for each column of b (P x k), in batches, and whether each converged
        (a right-hand side outside X'X's range, a contrast the design cannot identify, does not)."""
        solved, converged = np.zeros_like(b), np.zeros(b.shape[1], dtype=bool)
        step = self.batch()
        for start in range(0, b.shape[1], step):
            part = slice(start, start + step)
            solved[:, part], converged[part] = self._conjugate_gradients(b[:, part])
        return solved, converged

    def _conjugate_gradients(self, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Jacobi-preconditioned CG, one column per right-hand side, each stopping on its own:
        at TOLERANCE, or where it stalls (rounding's floor on a large panel; or a right-hand
        side outside X'X's range, whose residual never falls below its part outside it)."""
        diagonal = self.diagonal[:, None]
        x, r = np.zeros_like(b), b.copy()
        norm_b = np.linalg.norm(b, axis=0)
        best, best_norm = x.copy(), norm_b.copy()  # each column's closest iterate so far
        active = norm_b > TOLERANCE * norm_b
        z = r / diagonal
        p, rz = z.copy(), (r * z).sum(axis=0)
        checked = norm_b
        for iteration in range(1, MAX_ITERATIONS + 1):
            if not active.any():
                break
            ap = self.transposed(self.apply(p))
            curvature = (p * ap).sum(axis=0)
            alpha = np.divide(rz, curvature, out=np.zeros_like(rz), where=active & (curvature > 0))
            x += alpha * p
            r -= alpha * ap
            now = np.linalg.norm(r, axis=0)
            closer = now < best_norm
            best[:, closer], best_norm[closer] = x[:, closer], now[closer]
            active &= now > TOLERANCE * norm_b
            if iteration % STALL == 0:
                active &= now < checked / 10
                checked = now
            z = r / diagonal
            previous, rz = rz, (r * z).sum(axis=0)
            p = z + np.divide(rz, previous, out=np.zeros_like(rz), where=active & (previous != 0)) * p
        return best, best_norm <= IDENTIFIED * norm_b
