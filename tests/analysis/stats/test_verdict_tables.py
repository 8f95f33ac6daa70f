"""Agreement coefficients of verdict tables against their textbook definitions and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from council_db.analysis.stats.verdict_tables import (
    agreement,
    cluster_tables,
    cohen_kappa,
    kendall_tau_b,
    verdict_class,
    without_ties,
)


def table_of(a: list[int], b: list[int]) -> np.ndarray:
    """The 3x3 count table of two raters' verdicts (-1, 0, +1)."""
    return cluster_tables(np.zeros(len(a), dtype=np.int64), verdict_class(np.array(a)), verdict_class(np.array(b)),
                          np.ones(len(a)), 1)


def test_cohens_kappa_of_a_hand_table_is_po_minus_pe_over_one_minus_pe():
    a = [1, 1, 1, 0, -1, -1, 1, 0, -1, 1]
    b = [1, 1, 0, 0, -1, 1, 1, -1, -1, 1]
    observed = 7 / 10
    margins_a, margins_b = np.array([3, 2, 5]) / 10, np.array([3, 2, 5]) / 10  # -1, 0, +1
    chance = float(margins_a @ margins_b)
    table = table_of(a, b)
    assert agreement(table)[0] == pytest.approx(observed)
    assert cohen_kappa(table)[0] == pytest.approx((observed - chance) / (1 - chance))


def test_without_ties_keeps_only_verdicts_where_neither_rater_tied_as_mt_bench_s2():
    a = [1, 0, -1, 1, -1, 1]
    b = [1, 1, -1, 0, 1, 1]
    corner = without_ties(table_of(a, b))
    assert corner.sum() == 4  # the pairs (1,1), (-1,-1), (-1,1), (1,1)
    assert agreement(corner)[0] == pytest.approx(3 / 4)


def test_kendall_tau_b_over_answer_pairs_matches_scipy_on_one_ranking():
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 4, 9).astype(float), rng.integers(0, 4, 9).astype(float)
    i, j = np.triu_indices(9, 1)
    table = table_of(np.sign(x[i] - x[j]).astype(int).tolist(), np.sign(y[i] - y[j]).astype(int).tolist())
    assert kendall_tau_b(table)[0] == pytest.approx(scipy.stats.kendalltau(x, y).statistic)


def test_coefficients_are_nan_where_they_cannot_be_had():
    assert math.isnan(agreement(np.zeros(9))[0])
    assert math.isnan(cohen_kappa(table_of([1, 1], [1, 1]))[0])  # one class each: chance agreement 1
    assert math.isnan(kendall_tau_b(table_of([0, 0], [1, -1]))[0])  # a rater who tied every pair


def test_tables_are_summed_per_cluster_and_functions_take_a_stack_of_them():
    tables = cluster_tables(np.array([0, 0, 1]), np.array([2, 0, 1]), np.array([2, 0, 0]), np.array([1.0, 0.5, 2.0]), 2)
    assert tables.shape == (2, 9) and tables[0, 8] == 1.0 and tables[0, 0] == 0.5 and tables[1, 3] == 2.0
    assert agreement(tables).tolist() == [1.0, 0.0]
