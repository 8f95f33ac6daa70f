"""Cluster-robust inference that stays honest with few clusters: the CR2 covariance with
Bell-McCaffrey / Satterthwaite degrees of freedom for one contrast and Pustejovsky-Tipton's
approximate Hotelling T^2 (HTZ) for several.

CR1 (G/(G-1) times the sum of per-cluster score outer products) is biased down when each
cluster has leverage: residuals of a cluster the fit leans on are shrunk towards 0. With 10-30
sessions that made the all-slots-equal test reject 11-18% of null data sets at 5%. CR2 (Bell &
McCaffrey 2002) undoes the shrinkage, scaling each cluster's residuals by (I - H_gg)^(-1/2),
which is exactly unbiased when the errors are independent and homoskedastic; the t and F
reference distributions then take Satterthwaite degrees of freedom from the same working
model (Bell & McCaffrey 2002; Pustejovsky & Tipton 2018, who extend both to several contrasts
and to fixed effects absorbed within clusters, as the joint model's are).

Everything is worked in coefficient space from per-cluster sums (X_g'X_g, X_g'e_g), so the
cost is one pass over the records plus O(G p^3), and no N x N or n_g x n_g matrix is formed:
for a symmetric A_g = f(X_g M X_g'), A_g X_g = X_g f(M X_g'X_g) (f(AB)A = A f(BA)).
"""

from __future__ import annotations

from typing import Iterator

import msgspec
import numpy as np

from council_db.analysis.stats.unique_rows import distinct

_FULL_LEVERAGE = 1e-10  # 1 - eigenvalue below which a direction has full leverage (pseudo-inverse: 0)
# Clusters whose leverage has a norm up to this take (I - H_gg)^-1/2 by its power series (at most
# 18 terms), the rest by eigenvectors; the series stops where the terms left are below:
_SERIES_RADIUS = 0.1
_SERIES_TAIL = 2.0 ** -56
# Past 1,000 clusters CR2 and its df move a 95% CI's width by < 0.2% from CR1's on G-1 df
# (measured on simulated 4 x 4 councils: 0.6% at 300, 0.2% at 1,000, 0.1% at 2,000) while costing
# ~0.1 s per 1,000 sessions; past G p^3 = 2e8 its p x p work per cluster would dominate the fit.
MAX_CLUSTERS = 1000
MAX_WORK = 2e8


def _sym_power(matrix: np.ndarray, power: float) -> np.ndarray:
    values, vectors = np.linalg.eigh(matrix)
    return (vectors * np.maximum(values, 1e-300) ** power) @ vectors.T


def _cluster_blocks(x: np.ndarray, cluster: np.ndarray, n_clusters: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per cluster size: the clusters of that size, and their rows of x (clusters x size x p)."""
    p = x.shape[1]
    order = np.argsort(cluster, kind="stable")
    sizes = np.bincount(cluster, minlength=n_clusters)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    for size in distinct(sizes[sizes > 0]).tolist():
        which = np.flatnonzero(sizes == size)
        rows = order[(starts[which][:, None] + np.arange(size)[None, :]).ravel()]
        yield which, x[rows].reshape(len(which), size, p)


def _sandwich(root: np.ndarray, stack: np.ndarray) -> np.ndarray:
    """R S_g R for every symmetric S_g of a G x p x p stack, R symmetric, by two 2-D products
    (R S_g R = (S_g R)'R): numpy's matmul broadcasting a 2-D matrix over a stack takes a
    loop of its own, 5-6 times as slow at 1,000 x 17 x 17."""
    g, p = stack.shape[:2]
    right = (stack.reshape(g * p, p) @ root).reshape(g, p, p)
    return (np.swapaxes(right, 1, 2).reshape(g * p, p) @ root).reshape(g, p, p)


def cluster_cross_products(x: np.ndarray, cluster: np.ndarray, n_clusters: int) -> np.ndarray:
    """G x p x p: X_g'X_g for every cluster, one batched product per cluster size (no per-cluster loop)."""
    out = np.zeros((n_clusters, x.shape[1], x.shape[1]))
    for which, block in _cluster_blocks(x, cluster, n_clusters):
        out[which] = np.swapaxes(block, 1, 2) @ block
    return out


def _norms(leverage: np.ndarray) -> np.ndarray:
    """Per cluster: its leverage's Frobenius norm, at least its largest eigenvalue. ``_by_series``
    takes the clusters where it is at most _SERIES_RADIUS."""
    return np.sqrt(np.einsum("gij,gij->g", leverage, leverage))


def _by_series(leverage: np.ndarray, rho: float) -> np.ndarray:
    """(I - H)^-1/2 = sum_k binom(2k, k) / 4^k H^k for clusters of small leverage (H = R X_g'X_g R,
    eigenvalues in [0, rho]): a few batched matrix products where LAPACK's eigh takes each
    cluster one at a time (a report's 1,000 sessions: rho 0.013, 10 terms against 1,000
    eigendecompositions). Summed (by Horner) until the terms left, at most c_k rho^k / (1 - rho)
    over every eigenvalue, are below a double's rounding: the eigenvectors' matrices to 1e-15."""
    p = leverage.shape[1]
    coefficients = [1.0]  # c_k = c_(k-1) (2k - 1) / (2k)
    while len(coefficients) < 2 or coefficients[-1] * rho ** (len(coefficients) - 1) / (1.0 - rho) > _SERIES_TAIL:
        k = len(coefficients)
        coefficients.append(coefficients[-1] * (2 * k - 1) / (2 * k))
    total = np.zeros_like(leverage) + coefficients[-1] * np.eye(p)
    for coefficient in reversed(coefficients[:-1]):
        total = leverage @ total
        total[:, np.arange(p), np.arange(p)] += coefficient
    return total


def _by_coefficients(cross: np.ndarray, root: np.ndarray) -> np.ndarray:
    """(I - R X_g'X_g R)^-1/2 per cluster, R = M^1/2, from its p x p eigenvectors; a direction of
    full leverage gets 0 (the pseudo-inverse)."""
    values, vectors = np.linalg.eigh(root @ cross @ root)  # eigenvalues of H_gg, in [0, 1]
    gap = 1.0 - values
    factor = np.where(gap > _FULL_LEVERAGE, 1.0 / np.sqrt(np.maximum(gap, _FULL_LEVERAGE)), 0.0)
    return (vectors * factor[:, None, :]) @ np.swapaxes(vectors, 1, 2)


def _by_records(block: np.ndarray, root: np.ndarray) -> np.ndarray:
    """The same matrices from the s x s eigenvectors of H_gg = B B' (B = X_g R, s records in each
    cluster): when s < p, the smaller side of the same eigenvalues (4 x 4 against 7 x 7 for a
    reviewer's position fit: half the time). With B'u = sqrt(lambda) v for each eigenpair, the
    p x p matrix is I + sum (f(lambda) - 1) / lambda B'u u'B, f = (1 - lambda)^-1/2 (0 at full
    leverage), (f - 1) / lambda = 1 / (sqrt(1 - lambda) (1 + sqrt(1 - lambda))) kept finite at 0."""
    b = (block.reshape(-1, block.shape[2]) @ root).reshape(block.shape)
    values, vectors = np.linalg.eigh(b @ np.swapaxes(b, 1, 2))
    gap = 1.0 - values
    root_gap = np.sqrt(np.maximum(gap, _FULL_LEVERAGE))
    with np.errstate(divide="ignore"):
        shrink = np.where(gap > _FULL_LEVERAGE, 1.0 / (root_gap * (1.0 + root_gap)), -1.0 / values)
    w = np.swapaxes(vectors, 1, 2) @ b  # u'B per eigenpair: clusters x s x p
    return np.eye(block.shape[2]) + np.swapaxes(w, 1, 2) @ (w * shrink[:, :, None])


class CR2(msgspec.Struct):
    """The CR2 covariance of least-squares coefficients, and the degrees of freedom of
    contrasts of them. ``gram_inv`` is M = (X'X)^-1; per cluster, with L_g such that A_g X_g =
    X_g L_g, ``lead`` is L_g M and ``crossed`` X_g'X_g L_g M: a contrast c's u_g = A_g X_g M c
    in coefficients (L_g M c) and X_g'u_g, each by one product over every cluster."""

    cov: np.ndarray
    gram_inv: np.ndarray
    lead: np.ndarray
    crossed: np.ndarray

    @classmethod
    def fit(cls, x: np.ndarray, residuals: np.ndarray, cluster: np.ndarray, n_clusters: int,
            gram_inv: np.ndarray) -> CR2 | None:
        """None past MAX_CLUSTERS clusters or MAX_WORK (CR1 is then as good, and cheaper)."""
        p = x.shape[1]
        if n_clusters > MAX_CLUSTERS or n_clusters * p ** 3 > MAX_WORK:
            return None
        cross = np.zeros((n_clusters, p, p))
        root = _sym_power(gram_inv, 0.5)
        inverse_root = np.zeros((n_clusters, p, p)) + np.eye(p)  # (I - H_gg)^-1/2 in R's space; I without records
        for which, block in _cluster_blocks(x, cluster, n_clusters):
            cross[which] = np.swapaxes(block, 1, 2) @ block
            leverage = _sandwich(root, cross[which])
            norms = _norms(leverage)
            low = norms <= _SERIES_RADIUS
            if low.any():
                inverse_root[which[low]] = _by_series(leverage[low], float(norms[low].max()))
            which, block = which[~low], block[~low]  # the rest by eigenvectors
            small = block.shape[1] < p  # fewer records than columns: the smaller side of H_gg
            if len(which):
                inverse_root[which] = _by_records(block, root) if small else _by_coefficients(cross[which], root)
        lead = _sandwich(root, inverse_root)  # L_g M = R (I - H_gg)^-1/2 R^-1 M, M = R R
        scores = np.empty((n_clusters, p))
        for j in range(p):
            scores[:, j] = np.bincount(cluster, weights=x[:, j] * residuals, minlength=n_clusters)
        adjusted = (np.swapaxes(lead, 1, 2) @ scores[:, :, None])[:, :, 0]  # M L_g'X_g'e_g = M X_g'A_g e_g
        return cls(adjusted.T @ adjusted, gram_inv, lead, cross @ lead)

    @staticmethod
    def _each(stack: np.ndarray, contrasts: np.ndarray) -> np.ndarray:
        """G x p x q: every cluster's p x p matrix in ``stack`` times each contrast, one product."""
        g, p = stack.shape[:2]
        return (stack.reshape(g * p, p) @ contrasts.T).reshape(g, p, len(contrasts))

    def _parts(self, contrasts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per cluster g and contrast s: u_sg = A_g X_g M c_s through its Gram numbers
        d[g, s, t] = u_sg'u_tg, and w[g, :, s] = X_g'u_sg. Batched matrix products (G x p x q)."""
        v, w = self._each(self.lead, contrasts), self._each(self.crossed, contrasts)  # G x p x q
        return np.swapaxes(v, 1, 2) @ w, w

    def df(self, contrasts: np.ndarray) -> float:
        """Degrees of freedom: Bell-McCaffrey's Satterthwaite df for one contrast row, the HTZ
        eta (Pustejovsky & Tipton 2018, eq. 12) for several (q rows, linearly independent)."""
        contrasts = np.atleast_2d(contrasts)
        return float(self.single_dfs(contrasts)[0]) if contrasts.shape[0] == 1 else self._htz_df(contrasts)

    def _htz_df(self, contrasts: np.ndarray) -> float:
        """``df`` of q contrast rows through the q x q Gram numbers of every cluster (any q)."""
        q, m = contrasts.shape[0], self.gram_inv
        d, w = self._parts(contrasts)
        g, p = w.shape[:2]
        diag = (np.swapaxes(w, 1, 2).reshape(g * q, p) @ m).reshape(g, q, p) @ w  # (W_a M W_b')[g, g]: G x q x q
        working = (d - diag).sum(axis=0)  # E[C V C'] under the working model (iid errors, variance 1)
        values, vectors = np.linalg.eigh(working)
        if values.min() <= 0:
            return float("nan")
        normal = (vectors / np.sqrt(values)) @ vectors.T  # contrasts T C with E[T C V C' T'] = I
        d, w = normal @ d @ normal.T, w @ normal.T
        diag = normal @ diag @ normal.T
        outer = np.tensordot(w, w, axes=([0], [0])).transpose(1, 3, 0, 2)  # W_a'W_c, p x p per pair (a, c)
        # sum over s, t of frob(s, t, s, t) + frob(s, s, t, t), frob(a, b, c, e) being the sum over
        # clusters h, i of P_ab[h, i] P_ce[h, i], P_ab = diag(d_ab) - W_a M W_b': its per-cluster
        # parts over every pair at once, its trace parts tr(M O_ss M O_tt) and tr(M O_st M O_ts)
        trace_d, trace_diag = np.trace(d, axis1=1, axis2=2), np.trace(diag, axis1=1, axis2=2)
        by_pair = m @ outer  # M W_s'W_t: q x q x p x p
        own = by_pair[np.arange(q), np.arange(q)].sum(axis=0)
        total = float((d * d).sum() + trace_d @ trace_d - 2.0 * (d * diag).sum() - 2.0 * (trace_d @ trace_diag)
                      + np.einsum("ij,ji->", own, own) + np.einsum("stij,tsji->", by_pair, by_pair))
        return q * (q + 1) / total if total > 0 else float("nan")

    def single_dfs(self, contrasts: np.ndarray) -> np.ndarray:
        """``df`` of each contrast row on its own, as vectors per cluster and contrast (the
        report asks for sixty effects' df a fit: one batch of products, not sixty calls): with
        u_g = A_g X_g M c, d_g = u_g'u_g and w_g = X_g'u_g, the working variance is sum d_g -
        w_g'M w_g, and the df is 2 / the sum over clusters h, i of P[h, i]^2, P = diag(d) -
        W M W' (normalised to that variance 1)."""
        m, p = self.gram_inv, self.gram_inv.shape[0]
        v = self._each(self.lead, contrasts)  # L_g M c_s: G x p x q
        w = np.transpose(self._each(self.crossed, contrasts), (2, 0, 1))  # X_g'u_sg: q x G x p
        d = np.einsum("gis,sgi->gs", v, w)
        diag = np.einsum("sgi,sgi->gs", w, (w.reshape(-1, p) @ m).reshape(w.shape))
        working = (d - diag).sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            d, diag = d / working, diag / working
            product = m @ (np.swapaxes(w, 1, 2) @ w) / working[:, None, None]  # M W_s'W_s, normalised
            total = 2.0 * ((d * d).sum(axis=0) - 2.0 * (d * diag).sum(axis=0)
                           + np.einsum("sij,sji->s", product, product))
            return np.where((working > 0) & (total > 0), 2.0 / total, np.nan)
