"""Least squares on a within-session (demeaned) design, and inference on its coefficients.

``demean`` absorbs session fixed effects; ``solve`` fits after a rank check in column priority
order (Cholesky of the scaled Gram matrix, QR when it is ill conditioned); ``Inference``
gives estimates, cluster-robust t intervals and Wald tests of linear contrasts, and says
which contrasts the design cannot identify. The joint model (joint_model.py) is built on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from council_db.analysis.stats.distributions import f_sf
from council_db.analysis.stats.inference import t_p_value, t_quantile

_RANK_TOL = 1e-10  # squared relative residual norm at or below which a column counts as dependent
_ZERO_TOL = 1e-10  # a demeaned column this small relative to the raw one is absorbed (all zero)
_ESTIMABLE_TOL = 1e-6
_BLOCK = 64  # columns of the rank check factorised before the rest is updated at once
_COND_LIMIT = 1e8  # scaled Gram matrices better than this are solved by Cholesky, others by QR


@dataclass(frozen=True)
class Effect:
    """One estimate with its cluster-robust SE, 95% CI and two-sided t p-value (NaN: not identified)."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    p_value: float

    @property
    def identified(self) -> bool:
        return math.isfinite(self.estimate)


NAN_EFFECT = Effect(math.nan, math.nan, math.nan, math.nan, math.nan)


class WaldTest(NamedTuple):
    """Joint test that all slot effects are zero: F = W/df1 on (df1, df2) degrees of freedom."""

    statistic: float
    df1: int
    df2: int
    p_value: float


def demean(a: np.ndarray, sess: np.ndarray, size: np.ndarray) -> np.ndarray:
    n_sessions = len(size)
    if a.ndim == 1:
        return a - (np.bincount(sess, weights=a, minlength=n_sessions) / size)[sess]
    means = np.empty((n_sessions, a.shape[1]))
    for j in range(a.shape[1]):
        means[:, j] = np.bincount(sess, weights=a[:, j], minlength=n_sessions)
    return a - (means / size[:, None])[sess]


@dataclass
class Solved:
    keep: list[int]  # columns estimated, in order
    scale: np.ndarray  # P_all: column norms (1 for absorbed columns)
    xs: np.ndarray  # N x P: the kept columns of the demeaned design, scaled to unit norm
    beta_scaled: np.ndarray  # P: coefficients of the scaled columns
    gram_inv: np.ndarray  # P x P: (xs'xs)^-1
    residuals: np.ndarray  # N
    null: np.ndarray  # P_all x d orthonormal basis left by dropped factor columns
    removed: np.ndarray  # P_all bool: dropped non-factor columns (their effect taken as zero)


def solve(x: np.ndarray, x_raw: np.ndarray, y: np.ndarray, factor_cols: int) -> Solved:
    """Least squares on the demeaned design, after a rank check in column priority order.

    Columns are scaled to unit norm and the Gram matrix is formed in one pass over the data;
    the rank check is a sequential Cholesky on it (a column is dropped when its residual after
    projection on the columns kept before it has squared relative norm <= 1e-10, i.e. it is
    explained to 1 part in 1e5). The solution uses the Cholesky factor plus one step of
    iterative refinement when the scaled Gram matrix is well conditioned (cond < 1e8: the
    normal equations lose at most half the digits and the refinement recovers them; dummy-coded
    designs are far better than that) and Householder QR (lstsq) otherwise. Few passes over
    the data keep it fast even when a threaded BLAS is slowed down by a busy machine.
    """
    n, p_all = x.shape
    norm = np.sqrt(np.einsum("ij,ij->j", x, x))
    raw = np.sqrt(np.einsum("ij,ij->j", x_raw, x_raw))
    live = np.isfinite(norm) & (norm > _ZERO_TOL * np.maximum(raw, 1.0))
    scale = np.where(live, norm, 1.0)
    scaled = x / scale
    gram = scaled.T @ scaled
    keep, fitted = _rank_check(gram, live)
    kept = set(keep)
    removed = np.array([j >= factor_cols and j not in kept for j in range(p_all)], dtype=bool)
    if not keep:
        return Solved(keep, scale, np.zeros((n, 0)), np.zeros(0), np.zeros((0, 0)), y.copy(),
                       np.zeros((p_all, 0)), removed)

    xs = scaled[:, keep]
    gk = gram[np.ix_(keep, keep)]
    if _condition(gk) < _COND_LIMIT:
        # Well conditioned (checked above) and at most a few dozen columns: the inverse is exact
        # enough, and numpy's suffices (scipy.linalg would add ~0.2 s to every report's start-up).
        gram_inv = np.linalg.inv(gk)
        beta = gram_inv @ (xs.T @ y)
        beta = beta + gram_inv @ (xs.T @ (y - xs @ beta))
    else:
        beta = np.linalg.lstsq(xs, y, rcond=None)[0]
        r_inv = np.linalg.inv(np.linalg.qr(xs, mode="r"))
        gram_inv = r_inv @ r_inv.T

    vectors = []
    for j in range(factor_cols):
        if j in kept:
            continue
        v = np.zeros(p_all)
        v[j] = 1.0
        if j in fitted:  # x_j = sum_k (scale_j c_k / scale_k) x_k over the columns kept before j
            c, before = fitted[j]
            v[before] = -scale[j] * c / scale[before]
        vectors.append(v)
    null = np.linalg.qr(np.column_stack(vectors))[0] if vectors else np.zeros((p_all, 0))
    return Solved(keep, scale, xs, beta, gram_inv, y - xs @ beta, null, removed)


def _condition(gram: np.ndarray) -> float:
    """The 2-norm condition number of a symmetric positive semi-definite matrix, from its
    eigenvalues (as np.linalg.cond, from a full SVD, at a fraction of the cost)."""
    values = np.linalg.eigvalsh(gram)
    return float(values[-1] / values[0]) if values[0] > 0 else math.inf


def _rank_check(gram: np.ndarray, live: np.ndarray) -> tuple[list[int], dict[int, tuple[np.ndarray, list[int]]]]:
    """The columns kept, in priority order, and each dropped column's fit on the columns kept
    before it. A column is kept when its squared residual norm after projection on the kept
    ones (its pivot in a Cholesky factorisation that skips dropped columns) exceeds _RANK_TOL.
    Blocked: BLOCK columns at a time, then one matrix product updates the rest, so the check
    costs a Cholesky factorisation (one solve per column had cost O(P^4): 63 s at 1,000
    reviewers)."""
    cols = np.flatnonzero(live)
    n = len(cols)
    schur = gram[np.ix_(cols, cols)]  # each column less its projection on the kept ones so far
    factor = np.zeros((n, n))  # the Cholesky factor: a column per kept column, zero for dropped ones
    kept: list[int] = []
    dropped: list[int] = []
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        in_block: list[int] = []
        for j in range(start, stop):
            if in_block:
                schur[j:, j] -= factor[j:, in_block] @ factor[j, in_block]
            if schur[j, j] <= _RANK_TOL:
                dropped.append(j)
                continue
            factor[j:, j] = schur[j:, j] / math.sqrt(schur[j, j])
            in_block.append(j)
        kept.extend(in_block)
        if in_block and stop < n:
            schur[stop:, stop:] -= factor[stop:, in_block] @ factor[stop:, in_block].T
    fitted: dict[int, tuple[np.ndarray, list[int]]] = {}
    if dropped and kept:
        # G_kk c = g_kj with G_kk = F F': c = F'^-1 (row j of the factor); zero past j's place
        fits = np.linalg.solve(factor[np.ix_(kept, kept)].T, factor[np.ix_(dropped, kept)].T)
    for i, j in enumerate(dropped):
        before = int(np.searchsorted(kept, j))
        fitted[int(cols[j])] = (fits[:before, i] if before else np.zeros(0), cols[kept[:before]].tolist())
    return cols[kept].tolist(), fitted


def effect_of(estimate: float, variance: float, df: float) -> Effect:
    """An estimate with its variance as an Effect: SE, 95% t interval and two-sided p on df."""
    se = math.sqrt(max(variance, 0.0))
    p_value = t_p_value(estimate / se, df) if se > 0 else math.nan
    crit = t_quantile(0.95, df)
    return Effect(estimate, se, estimate - crit * se, estimate + crit * se, p_value)


def effects_of(estimates: np.ndarray, variances: np.ndarray, dfs: np.ndarray) -> list[Effect]:
    """``effect_of`` of every element, the t tails over the array at once; each quantile from
    ``t_quantile``'s cache (a report asked again of the same data finds its dfs there)."""
    ses = np.sqrt(np.maximum(variances, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        p_values = np.where(ses > 0, t_p_value(estimates / ses, dfs), math.nan)
    crit = np.array([t_quantile(0.95, df) for df in dfs.tolist()], dtype=np.float64)
    return [Effect(*row) for row in zip(estimates.tolist(), ses.tolist(), (estimates - crit * ses).tolist(),
                                        (estimates + crit * ses).tolist(), p_values.tolist())]


class Inference:
    """Estimates, t inference and estimability of linear contrasts of the coefficients: on
    ``df_of(contrast rows)`` degrees of freedom when given (CR2's Bell-McCaffrey / HTZ df,
    stats/small_sample), else on ``df`` (G-1)."""

    def __init__(self, beta: np.ndarray, cov: np.ndarray, null: np.ndarray, removed: np.ndarray,
                 df: int, df_of: Callable[[np.ndarray], float] | None = None,
                 each_df: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        self.beta, self.cov, self.null, self.removed, self.df = beta, cov, null, removed, df
        self.df_of, self.each_df = df_of, each_df

    def _df(self, rows: np.ndarray) -> float:
        found = self.df_of(rows) if self.df_of is not None else math.nan
        return found if math.isfinite(found) else self.df

    def _dfs(self, rows: np.ndarray) -> np.ndarray:
        """``_df`` of each row on its own: ``each_df`` over them all where given."""
        if self.df_of is None:
            return np.full(len(rows), float(self.df))
        if self.each_df is None:
            return np.array([self._df(rows[i:i + 1]) for i in range(len(rows))], dtype=np.float64)
        found = self.each_df(rows)
        return np.where(np.isfinite(found), found, self.df)

    def estimable(self, contrast: np.ndarray) -> bool:
        if np.any(contrast[self.removed] != 0):
            return False
        scale = max(float(np.linalg.norm(contrast)), 1.0)
        return float(np.linalg.norm(self.null.T @ contrast)) <= _ESTIMABLE_TOL * scale

    def effect(self, contrast: np.ndarray) -> Effect:
        if not self.estimable(contrast):
            return NAN_EFFECT
        return effect_of(float(contrast @ self.beta), float(contrast @ self.cov @ contrast),
                            self._df(contrast[None, :]))

    def effects(self, contrasts: np.ndarray) -> list[Effect]:
        """``effect`` of every row, in a few matrix products: one contrast at a time costs
        O(P^2) each, O(P^3) in all, in Python calls (47 s for 2,000 reviewers)."""
        if not len(contrasts):
            return []
        scale = np.maximum(np.linalg.norm(contrasts, axis=1), 1.0)
        estimable = ~(contrasts[:, self.removed] != 0).any(axis=1) & \
            (np.linalg.norm(contrasts @ self.null, axis=1) <= _ESTIMABLE_TOL * scale)
        out = [NAN_EFFECT] * len(contrasts)
        rows = np.flatnonzero(estimable)
        if len(rows):
            found = contrasts[rows]
            estimates = found @ self.beta
            variances = np.einsum("ij,ij->i", found @ self.cov, found)
            for i, effect in zip(rows.tolist(), effects_of(estimates, variances, self._dfs(found))):
                out[i] = effect
        return out


    def wald(self, contrasts: np.ndarray) -> WaldTest | None:
        """H0: every row's contrast is zero, on the identified part of the rows' span."""
        if self.null.shape[1]:
            # combinations a with contrasts.T @ a orthogonal to the null space
            m = self.null.T @ contrasts.T
            _, s, vt = np.linalg.svd(m)
            rank = int((s > _ESTIMABLE_TOL * max(1.0, s.max(initial=0.0))).sum())
            contrasts = vt[rank:] @ contrasts
        if contrasts.shape[0] == 0:
            return None
        _, s, vt = np.linalg.svd(contrasts, full_matrices=False)
        q = int((s > _ESTIMABLE_TOL * max(1.0, s.max(initial=0.0))).sum())
        if q == 0:
            return None
        b = vt[:q]
        value = b @ self.beta
        middle = b @ self.cov @ b.T
        inverse = np.linalg.pinv(middle)
        statistic = float(value @ inverse @ value) / q
        if self.df_of is None:
            df2 = self.df
        else:  # HTZ: (eta - q + 1) / eta * W / q ~ F(q, eta - q + 1), its df2 rounded down (conservative)
            eta = self._df(b)
            df2 = max(int(math.floor(eta - q + 1)), 1)
            statistic *= (eta - q + 1) / eta
        p_value = float(f_sf(statistic, q, df2)) if math.isfinite(statistic) else math.nan
        return WaldTest(statistic, q, df2, p_value)
