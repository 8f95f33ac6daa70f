"""CR2 and its degrees of freedom, worked in coefficient space, equal the textbook n-space
formulas (Bell & McCaffrey 2002; Pustejovsky & Tipton 2018) on a small design with fixed
effects absorbed within clusters; and the t test they give holds its level with 8 clusters
where CR1 with G-1 df does not."""

from __future__ import annotations

import numpy as np
import pytest

from council_db.analysis.stats.inference import t_p_value
from council_db.analysis.stats.small_sample import CR2


def demeaned(values: np.ndarray, cluster: np.ndarray) -> np.ndarray:
    means = np.array([values[cluster == g].mean(axis=0) for g in range(cluster.max() + 1)])
    return values - means[cluster]


def design(seed: int, clusters: int = 7, p: int = 3):
    rng = np.random.default_rng(seed)
    cluster = np.repeat(np.arange(clusters), rng.integers(3, 7, clusters))
    x = demeaned(rng.standard_normal((len(cluster), p)), cluster)
    y = demeaned(rng.standard_normal(len(cluster)), cluster)
    gram_inv = np.linalg.inv(x.T @ x)
    return x, y - x @ (gram_inv @ x.T @ y), cluster, gram_inv


def textbook(x, e, cluster, gram_inv, contrasts):
    """CR2 and the df with every matrix spelled out: A_g = (I - H_gg)^-1/2, G's columns
    (I - H)_g A_g X_g M c, P_st = G_s'G_t (contrasts normalised so that tr P_st = delta_st)."""
    n, hat = len(e), x @ gram_inv @ x.T
    blocks = []
    for g in range(cluster.max() + 1):
        rows = np.flatnonzero(cluster == g)
        values, vectors = np.linalg.eigh(np.eye(len(rows)) - hat[np.ix_(rows, rows)])
        blocks.append((rows, (vectors / np.sqrt(values)) @ vectors.T))
    meat = sum(np.outer(*(2 * [x[rows].T @ a @ e[rows]])) for rows, a in blocks)

    def columns(c):
        out = []
        for rows, a in blocks:
            u = np.zeros(n)
            u[rows] = a @ x[rows] @ gram_inv @ c
            out.append(u - hat @ u)
        return np.array(out).T

    parts = [columns(c) for c in contrasts]
    working = np.array([[np.trace(a.T @ b) for b in parts] for a in parts])
    values, vectors = np.linalg.eigh(working)
    parts = [columns(c) for c in (vectors / np.sqrt(values)) @ vectors.T @ contrasts]
    q = len(contrasts)
    total = sum(np.sum((parts[s].T @ parts[t]) ** 2) + np.sum((parts[s].T @ parts[s]) * (parts[t].T @ parts[t]))
                for s in range(q) for t in range(q))
    return gram_inv @ meat @ gram_inv, q * (q + 1) / total


@pytest.mark.parametrize("contrasts", [np.array([[1.0, -1.0, 0.0]]), np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0]]),
                                       np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [0.5, 0.2, 1.0]])])
def test_cr2_and_its_degrees_of_freedom_equal_the_textbook_formulas(contrasts):
    x, e, cluster, gram_inv = design(1)
    fitted = CR2.fit(x, e, cluster, cluster.max() + 1, gram_inv)
    cov, df = textbook(x, e, cluster, gram_inv, contrasts)
    assert np.allclose(fitted.cov, cov, atol=1e-12)
    assert fitted.df(contrasts) == pytest.approx(df, rel=1e-9)


def test_with_eight_clusters_the_cr2_t_test_holds_its_level_where_cr1_does_not():
    """600 null data sets of 8 clusters with a cluster-level regressor (the hard case: one
    cluster's leverage is large). CR1 with 7 df rejects ~30%; CR2 with BM df stays <= 5%
    (binomial: 5% of 600 is 30 +/- 11)."""
    rng = np.random.default_rng(7)
    clusters, size = 8, 4
    cluster = np.repeat(np.arange(clusters), size)
    cr1 = cr2 = 0
    for _ in range(600):
        level = np.repeat(rng.standard_normal(clusters) ** 3, size)  # skewed: a few clusters lead
        x = demeaned(np.column_stack([level * np.tile([1.0, -1.0, 0.5, -0.5], clusters),
                                      rng.standard_normal(len(cluster))]), cluster)
        y = demeaned(rng.standard_normal(len(cluster)), cluster)
        gram_inv = np.linalg.inv(x.T @ x)
        beta = gram_inv @ x.T @ y
        e = y - x @ beta
        scores = np.array([x[cluster == g].T @ e[cluster == g] for g in range(clusters)])
        n, p = len(y), 2
        cov1 = clusters / (clusters - 1) * (n - 1) / (n - p) * gram_inv @ scores.T @ scores @ gram_inv
        cr1 += t_p_value(beta[0] / np.sqrt(cov1[0, 0]), clusters - 1) <= 0.05
        fitted = CR2.fit(x, e, cluster, clusters, gram_inv)
        cr2 += t_p_value(beta[0] / np.sqrt(fitted.cov[0, 0]), fitted.df(np.array([[1.0, 0.0]]))) <= 0.05
    assert cr2 <= 36 < cr1


def test_one_contrasts_df_from_vectors_is_the_htz_path_with_q_one():
    """The report asks for one effect's df at a time: that shortcut (per-cluster vectors, no
    q x q blocks) gives what the general q-contrast path gives with q = 1."""
    x, e, cluster, gram_inv = design(3, clusters=40, p=5)
    fitted = CR2.fit(x, e, cluster, cluster.max() + 1, gram_inv)
    rng = np.random.default_rng(4)
    for contrast in [*np.eye(5), *rng.standard_normal((6, 5))]:
        assert fitted.df(contrast[None, :]) == pytest.approx(fitted._htz_df(contrast[None, :]), rel=1e-12)


def test_small_clusters_leverage_from_their_records_side_is_the_coefficients_side():
    """Clusters of fewer records than columns (a reviewer's 4 scores a session, 7 columns) take
    (I - H_gg)^-1/2 from the s x s eigenproblem: the same matrices as the p x p one, a
    cluster whose records alone identify a column (full leverage, the pseudo-inverse) too."""
    from council_db.analysis.stats.small_sample import _by_coefficients, _by_records, _cluster_blocks, _sym_power

    rng = np.random.default_rng(7)
    cluster = np.repeat(np.arange(30), 4)
    x = demeaned(rng.standard_normal((len(cluster), 7)), cluster)
    x[:, 6] = 0.0
    x[:2, 6] = [1.0, -1.0]  # column 6 varies in cluster 0 alone
    root = _sym_power(np.linalg.inv(x.T @ x), 0.5)
    (which, block), = _cluster_blocks(x, cluster, 30)
    cross = np.swapaxes(block, 1, 2) @ block
    np.testing.assert_allclose(_by_records(block, root), _by_coefficients(cross, root), atol=1e-12)


def test_cr2_of_clusters_smaller_than_the_design_equals_the_textbook_formulas():
    x, e, cluster, gram_inv = design(2, clusters=12, p=8)  # 3-6 records a cluster, 8 columns
    contrast = np.eye(8)[:1] - np.eye(8)[1:2]
    fitted = CR2.fit(x, e, cluster, cluster.max() + 1, gram_inv)
    cov, df = textbook(x, e, cluster, gram_inv, contrast)
    assert np.allclose(fitted.cov, cov, atol=1e-12)
    assert fitted.df(contrast) == pytest.approx(df, rel=1e-9)


def test_low_leverage_clusters_take_the_power_series_equal_to_the_eigenvectors():
    """Many clusters, each of small leverage (a report's 1,000 sessions), take (I - H_gg)^-1/2
    by its power series: the eigenvectors' matrices to 1e-13, and the SEs to 1e-12; a cluster
    of large leverage (over the series' radius) is left to the eigenvectors."""
    from council_db.analysis.stats.small_sample import _SERIES_RADIUS, _by_coefficients, _by_series, _norms, _sym_power

    x, e, cluster, gram_inv = design(5, clusters=400, p=6)
    root = _sym_power(gram_inv, 0.5)
    cross = np.zeros((400, 6, 6))
    np.add.at(cross, cluster, x[:, :, None] * x[:, None, :])
    leverage = root @ cross @ root
    norms = _norms(leverage)
    assert (norms <= _SERIES_RADIUS).all()
    np.testing.assert_allclose(_by_series(leverage, norms.max()), _by_coefficients(cross, root), rtol=0, atol=1e-13)
    few, _, few_cluster, few_inv = design(6, clusters=5, p=3)  # 5 clusters: leverage far over the radius
    few_cross = np.zeros((5, 3, 3))
    np.add.at(few_cross, few_cluster, few[:, :, None] * few[:, None, :])
    few_root = _sym_power(few_inv, 0.5)
    assert (_norms(few_root @ few_cross @ few_root) > _SERIES_RADIUS).all()


def test_cr2_of_many_low_leverage_clusters_equals_the_textbook_formulas():
    x, e, cluster, gram_inv = design(8, clusters=300, p=4)
    contrast = np.eye(4)[:1] - np.eye(4)[1:2]
    fitted = CR2.fit(x, e, cluster, cluster.max() + 1, gram_inv)
    cov, df = textbook(x, e, cluster, gram_inv, contrast)
    np.testing.assert_allclose(fitted.cov, cov, rtol=1e-12, atol=0)
    assert fitted.df(contrast) == pytest.approx(df, rel=1e-12)


def test_each_rows_df_at_once_is_each_rows_df_alone():
    """A fit's sixty effects take their df in one call (``single_dfs``): each row's is the
    q = 1 HTZ path's, a contrast the design leaves no working variance NaN."""
    x, e, cluster, gram_inv = design(3, clusters=40, p=5)
    fitted = CR2.fit(x, e, cluster, cluster.max() + 1, gram_inv)
    rows = np.vstack([np.eye(5), np.random.default_rng(4).standard_normal((6, 5)), np.zeros((1, 5))])
    found = fitted.single_dfs(rows)
    expected = [fitted._htz_df(row[None, :]) for row in rows[:-1]]
    np.testing.assert_allclose(found[:-1], expected, rtol=1e-12)
    assert np.isnan(found[-1])
