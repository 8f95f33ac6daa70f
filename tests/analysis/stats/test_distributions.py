"""stats.distributions against scipy.special: relative error <= 1e-10 over the range the
statistics use (df 0.5 to 1e7, |t| to 1e3, tails down to 1e-300), on arrays and on single
floats (two code paths), with scipy's edges; and against closed forms, to 40 digits, where
scipy.special itself is off: the t cdf near 0 (stdtr, 2e-9 at df = 1), far t quantiles
(stdtrit, by a factor 2.9), F tails at 1e7 denominator df (fdtrc, 2.7e-10) and chi-square
lower tails at 1e7 df (chdtr, 0.9%)."""

from __future__ import annotations

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from council_db.analysis.stats.distributions import (
    FEW,
    chi2_cdf,
    chi2_isf,
    chi2_sf,
    f_sf,
    normal_cdf,
    normal_ppf,
    t_cdf,
    t_ppf,
)

RTOL = 1e-10
TINY = 1e-300  # below it a probability is underflow, compared only as "about 0"
DFS = np.geomspace(0.5, 1e7, 41)
T_VALUES = np.concatenate([np.geomspace(1e-3, 1e3, 61), np.linspace(1.6, 2.1, 11)])  # the fraction's switch


def assert_close(mine: np.ndarray, ref: np.ndarray, rtol: float = RTOL) -> None:
    """Relative error <= rtol where the reference is at least TINY; both below ~TINY elsewhere."""
    mine, ref = np.asarray(mine), np.asarray(ref)
    assert mine.shape == ref.shape
    assert np.array_equal(np.isnan(mine), np.isnan(ref))
    big = np.abs(ref) >= TINY
    rel = np.abs(mine[big] - ref[big]) / np.abs(ref[big])
    if rel.size:
        worst = int(np.argmax(rel))
        assert rel[worst] <= rtol, f"relative error {rel[worst]:.2e}: {mine[big][worst]!r}, {ref[big][worst]!r}"
    small = ~big & ~np.isnan(ref)
    assert np.all(np.abs(mine[small]) <= 1e3 * TINY)


def test_t_cdf_matches_scipy_over_df_and_t_and_both_tails():
    df, t = np.meshgrid(DFS, np.concatenate([-T_VALUES, T_VALUES]))
    assert_close(t_cdf(t, df), special.stdtr(df, t))


def test_t_cdf_on_single_floats_is_the_array_result():
    df, t = np.meshgrid(DFS[::4], -T_VALUES[::5])
    singles = np.array([t_cdf(float(a), float(b)) for a, b in zip(t.ravel(), df.ravel())]).reshape(t.shape)
    np.testing.assert_allclose(singles, t_cdf(t, df), rtol=1e-12)  # numpy and math round logs apart
    assert isinstance(t_cdf(-2.0, 7), float) and isinstance(t_cdf(np.float64(-2.0), np.int64(7)), float)


@pytest.mark.parametrize("function, args", [
    (t_cdf, ([-2.5, 0.3, 4.0, -30.0], [3.5, 12.0, 57.2, 2.0])),
    (t_ppf, (0.975, [3.5, 12.0, 57.2, 1e5])),
    (chi2_sf, ([0.5, 7.0, 30.0, 900.0], [1.0, 4.5, 12.0, 800.0])),
    (chi2_isf, ([1e-8, 0.01, 0.5, 0.99], [1.0, 4.5, 12.0, 800.0])),
    (f_sf, ([0.5, 3.0, 12.0, 1e3], 3.0, [4.0, 30.0, 120.0, 9.5])),
])
def test_a_few_elements_are_each_what_their_single_float_gives(function, args):
    """Up to FEW elements go through the float kernel one at a time: the array kernel's fixed
    iterations cost 1-4 ms a call even for 4 elements (a report's trend CIs)."""
    arrays = np.broadcast_arrays(*(np.asarray(arg, dtype=float) for arg in args))
    singles = [function(*values) for values in zip(*(array.tolist() for array in arrays))]

    assert function(*args).tolist() == singles
    many = [np.resize(array, FEW + 1) for array in arrays]  # past FEW, the array kernel: the same to rounding
    np.testing.assert_allclose(function(*many), np.resize(singles, FEW + 1), rtol=1e-12)


def test_t_ppf_matches_scipy_and_inverts_the_cdf_far_into_the_tail():
    levels = [0.9, 0.95, 0.975, 0.995, 0.9995]
    df, p = np.meshgrid(DFS, np.concatenate([np.geomspace(1e-12, 0.49, 40), levels, 1 - np.geomspace(1e-12, 0.4, 20)]))
    assert_close(t_ppf(p, df), special.stdtrit(df, p))
    df_far, p_far = np.meshgrid(DFS, np.geomspace(1e-300, 1e-12, 30))
    t = t_ppf(p_far, df_far)
    finite = np.isfinite(t)  # df < 1 puts the quantile of p < 1e-80 past 1e153: -inf
    assert np.all(t[~finite] == -np.inf) and np.all(df_far[~finite] < 2)
    assert_close(special.stdtr(df_far[finite], t[finite]), p_far[finite], rtol=1e-11)


def test_t_cdf_near_zero_matches_the_closed_forms_where_scipy_is_off():
    t = np.geomspace(1e-12, 1e3, 60)
    cauchy_tail = np.arctan(1 / t) / np.pi  # P(T <= -t), written without cancellation
    df2_tail = 1 / (np.sqrt(2 + t * t) * (np.sqrt(2 + t * t) + t))
    for df, tail in ((1.0, cauchy_tail), (2.0, df2_tail)):
        assert_close(t_cdf(-t, df), tail, rtol=1e-14)
        assert_close(t_cdf(t, df), 1 - tail, rtol=1e-15)
    assert special.stdtr(1.0, 8.313467867448851e-09) - 0.5 == pytest.approx(4.7e-9, rel=0.01)  # not 2.6e-9


def test_far_t_quantiles_match_the_closed_forms_where_scipy_is_off():
    p = np.geomspace(1e-150, 1e-3, 60)  # df = 1 below 1e-153 is past 1e153: -inf
    assert_close(t_ppf(p, 1.0), -1.0 / np.tan(np.pi * p))  # Cauchy
    p = np.geomspace(1e-300, 1e-3, 60)
    assert_close(t_ppf(p, 2.0), (2 * p - 1) / np.sqrt(2 * p * (1 - p)))
    # scipy.special.stdtrit is off by a factor 2.9 here: its own stdtr at its answer is 8.8 p
    df, p = 2.078267087238851, 4.31594063818536e-202
    assert special.stdtr(df, t_ppf(p, df)) == pytest.approx(p, rel=1e-12)
    assert special.stdtr(df, special.stdtrit(df, p)) / p == pytest.approx(8.85, rel=0.01)


@pytest.mark.parametrize("dfn", [1, 2, 3, 4, 5, 6])
def test_f_sf_matches_scipy_for_the_numerator_df_of_slot_tests(dfn):
    dfd, f = np.meshgrid(DFS[DFS <= 1e6], np.geomspace(1e-4, 1e4, 61))  # above, scipy drifts (below)
    assert_close(f_sf(f, dfn, dfd), special.fdtrc(dfn, dfd, f))


def exact_f_sf(f: float, dfn: int, dfd: float) -> float:
    """P(F > f) for even dfn: I_x(a, n) = x^a sum_{j<n} C(a+j-1, j) (1-x)^j, n = dfn/2, to 40 digits."""
    getcontext().prec = 40
    a = Decimal(dfd) / 2
    x = Decimal(dfd) / (Decimal(dfd) + Decimal(dfn) * Decimal(f))
    total, coefficient = Decimal(0), Decimal(1)
    for j in range(dfn // 2):
        coefficient = coefficient * (a + j - 1) / j if j else coefficient
        total += coefficient * (1 - x) ** j
    return float((a * x.ln()).exp() * total)


@pytest.mark.parametrize("dfn", [2, 4, 10, 20, 50])
def test_f_sf_matches_the_closed_form_for_even_numerator_df_where_scipy_drifts(dfn):
    dfd, f = np.meshgrid(np.geomspace(0.5, 1e7, 15), np.geomspace(1e-3, 1e3, 15))
    exact = np.array([exact_f_sf(a, dfn, b) for a, b in zip(f.ravel(), dfd.ravel())]).reshape(f.shape)
    assert_close(f_sf(f, dfn, dfd), exact, rtol=1e-12)
    # scipy.special.fdtrc is off by 2.7e-10 at 1e7 denominator df, by 1e-7 with 20 numerator df
    assert special.fdtrc(4, 1e7, 2.5118864315095824) / exact_f_sf(2.5118864315095824, 4, 1e7) - 1 < -2e-10


def test_chi2_tails_match_scipy_over_df_and_x():
    df, ratio = np.meshgrid(np.geomspace(0.5, 1e7, 31), np.concatenate([np.geomspace(1e-3, 1e3, 61), [1.0]]))
    x = df * ratio  # x = df: the series' slowest point
    assert_close(chi2_cdf(x, df), special.chdtr(df, x))
    assert_close(chi2_sf(x, df), special.chdtrc(df, x))


def exact_chi2_cdf(x: float, df: int) -> float:
    """P(X <= x) for even df: P(Poisson(x/2) >= df/2), summed to 40 digits (log n! by Stirling's
    series, exact to far more digits than that at the df used here)."""
    getcontext().prec = 40
    a, y = df // 2, Decimal(x) / 2
    n = Decimal(a)
    log_factorial = ((n + Decimal("0.5")) * n.ln() - n + (2 * Decimal(math.pi)).ln() / 2 + 1 / (12 * n)
                     - 1 / (360 * n ** 3) + 1 / (1260 * n ** 5))
    term, total, k = (-y + a * y.ln() - log_factorial).exp(), Decimal(0), a
    while term > total * Decimal("1e-30"):
        total, k = total + term, k + 1
        term = term * y / k
    return float(total)


@pytest.mark.parametrize("x", [9_979_085.791782258, 9.99e6, 1e7, 1.001e7, 1.002e7])
def test_chi2_at_1e7_df_matches_the_poisson_sum_where_scipy_is_off(x):
    exact = exact_chi2_cdf(x, 10 ** 7)
    assert chi2_cdf(x, 1e7) == pytest.approx(exact, rel=1e-11)
    assert chi2_sf(x, 1e7) == pytest.approx(1 - exact, rel=1e-11)
    assert chi2_isf(1 - exact, 1e7) == pytest.approx(x, rel=1e-12)
    if x < 9.98e6:  # scipy.special.chdtr is off by 0.9% here
        assert special.chdtr(1e7, x) / exact - 1 < -0.008


def test_chi2_isf_matches_scipy_down_to_tails_of_1e_300():
    df, q = np.meshgrid(np.geomspace(0.5, 1e6, 29),
                        np.concatenate([np.geomspace(1e-300, 0.5, 40), 1 - np.geomspace(1e-12, 0.5, 20)]))
    assert_close(chi2_isf(q, df), special.chdtri(df, q))


def test_chi2_isf_on_single_floats_matches_scipy_where_anomalies_use_it():
    for k in np.geomspace(1.0, 150.0, 12):
        for q in (0.1, 0.5, 0.9):
            assert chi2_isf(q, float(k)) == pytest.approx(special.chdtri(k, q), rel=RTOL)


def test_normal_cdf_and_ppf_match_scipy():
    z = np.linspace(-37.5, 37.5, 601)
    assert_close(normal_cdf(z), special.ndtr(z))
    assert_close(np.array([normal_cdf(float(v)) for v in z]), special.ndtr(z))
    p = np.concatenate([np.geomspace(1e-300, 0.5, 80), 1 - np.geomspace(1e-16, 0.5, 40)])
    assert_close(normal_ppf(p), special.ndtri(p))


def test_normal_ppf_is_normaldists_inv_cdf_to_the_bit_on_floats_and_arrays():
    """AS 241 written out (importing statistics cost every report's first call 5-9 ms): the
    same operations give the same floats, over both branches and the far tails."""
    from statistics import NormalDist

    rng = np.random.default_rng(241)
    p = np.concatenate([rng.random(20_000), 10.0 ** -rng.uniform(0, 300, 5_000), 1 - 10.0 ** -rng.uniform(0, 16, 5_000),
                        [0.5, 0.075, 0.925, 0.0749999, 0.9250001, 5e-324, 1 - 2 ** -53]])
    p = p[(p > 0) & (p < 1)]
    expected = np.array([NormalDist().inv_cdf(float(v)) for v in p])

    assert np.array_equal(normal_ppf(p), expected)
    assert [normal_ppf(float(v)) for v in p] == expected.tolist()


nan, inf = math.nan, math.inf
EDGES = [  # (ours, scipy's with its argument order, arguments in ours' order)
    (t_cdf, lambda t, df: special.stdtr(df, t),
     [(1, 0), (1, -1), (nan, 3), (1, nan), (-inf, 3), (inf, 3), (0, 3), (-1, inf), (inf, inf), (1e-200, 3)]),
    (t_ppf, lambda p, df: special.stdtrit(df, p),
     [(1, 3), (-0.1, 3), (1.1, 3), (nan, 3), (0.5, 0), (0.5, 3), (0.3, inf)]),
    (f_sf, lambda f, dfn, dfd: special.fdtrc(dfn, dfd, f),
     [(1, 0, 10), (1, 3, 0), (-1, 3, 10), (0, 3, 10), (inf, 3, 10), (nan, 3, 10), (1, inf, 10), (1, 3, inf)]),
    (chi2_cdf, lambda x, df: special.chdtr(df, x),
     [(1, 0), (0, 0), (1, -1), (-1, 3), (0, 3), (inf, 3), (1, inf), (inf, inf), (nan, 3), (1, nan)]),
    (chi2_sf, lambda x, df: special.chdtrc(df, x),
     [(1, 0), (0, 0), (1, -1), (-1, 3), (0, 3), (inf, 3), (1, inf), (inf, inf), (nan, 3), (1, nan)]),
    (chi2_isf, lambda q, df: special.chdtri(df, q), [(0.5, 0), (0, 3), (1, 3), (-0.1, 3), (nan, 3), (0.5, inf)]),
    (normal_ppf, special.ndtri, [(0,), (1,), (-0.1,), (nan,)]),
    (normal_cdf, special.ndtr, [(-inf,), (inf,), (nan,)]),
]


@pytest.mark.parametrize(("ours", "scipys", "cases"), EDGES, ids=[e[0].__name__ for e in EDGES])
def test_edges_are_scipys_on_floats_and_arrays(ours, scipys, cases):
    expected = np.array([float(scipys(*case)) for case in cases])
    np.testing.assert_allclose([ours(*case) for case in cases], expected, rtol=1e-14)
    np.testing.assert_allclose(ours(*(np.array(column, dtype=float) for column in zip(*cases))), expected, rtol=1e-14)


def test_t_ppf_at_zero_is_minus_infinity_where_scipy_says_plus():
    assert t_ppf(0.0, 3) == -inf and special.stdtrit(3, 0.0) == inf


def test_arrays_broadcast_like_numpy():
    assert t_cdf(np.array([[-1.0], [1.0]]), np.array([2.0, 5.0, 30.0])).shape == (2, 3)
    assert chi2_sf(np.array([1.0, 2.0]), 3).shape == (2,)


log_uniform_df = st.floats(math.log(0.5), math.log(1e7)).map(math.exp)


@settings(max_examples=300, deadline=None)
@given(df=log_uniform_df, t=st.floats(1e-3, 1e3), negative=st.booleans())
def test_any_t_cdf_matches_scipy(df, t, negative):
    t = -t if negative else t
    ref = special.stdtr(df, t)
    assert t_cdf(t, df) == pytest.approx(ref, rel=RTOL, abs=TINY)


@settings(max_examples=200, deadline=None)
@given(df=log_uniform_df, ratio=st.floats(math.log(1e-3), math.log(1e3)).map(math.exp))
def test_any_chi2_sf_matches_scipy(df, ratio):
    assert chi2_sf(df * ratio, df) == pytest.approx(special.chdtrc(df, df * ratio), rel=RTOL, abs=TINY)
