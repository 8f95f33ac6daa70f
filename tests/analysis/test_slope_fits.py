"""slope_fits.Cells: a resample of instants refits each subject's within-pair slope; the
refit must be the least squares of the records repeated by their instant's weight, computed
here from the definition, whether the cell sums are taken in one block or many."""

from __future__ import annotations

import msgspec
import numpy as np
import pytest

from council_db.analysis.drift import slope_fits
from council_db.analysis.drift.slope_fits import Cells, Records

N_INSTANTS, N_SUBJECTS, PARTNERS = 40, 3, 4


def shuffled_records(rng: np.random.Generator) -> Records:
    """Each subject scored with each partner (a pair) at random instants, in no particular order."""
    n = 600
    subject = rng.integers(0, N_SUBJECTS, n)
    pair = subject * PARTNERS + rng.integers(0, PARTNERS, n)
    instant = rng.integers(0, N_INSTANTS, n)
    t = instant / 7.0 - 3.0
    residual = 0.05 * (subject - 1) * t + rng.normal(size=n)
    return Records(instant, np.arange(n), subject, pair, t, residual, N_INSTANTS, N_SUBJECTS)


def weighted_within_pair_slopes(r: Records, instant_weights: np.ndarray) -> np.ndarray:
    """Per subject: sum over its pairs of sum w (t - mean_w t)(e - mean_w e) over sum w (t - mean_w t)^2."""
    w = instant_weights[r.instant]
    slopes = []
    for s in range(r.n_subjects):
        sxx = sxy = 0.0
        for p in np.unique(r.pair[r.subject == s]):
            rows = r.pair == p
            if w[rows].sum() == 0:
                continue
            dt = r.t[rows] - np.average(r.t[rows], weights=w[rows])
            de = r.residual[rows] - np.average(r.residual[rows], weights=w[rows])
            sxx += float(np.sum(w[rows] * dt * dt))
            sxy += float(np.sum(w[rows] * dt * de))
        slopes.append(sxy / sxx if sxx > 1e-12 else np.nan)
    return np.array(slopes)


def resample_weights(rng: np.random.Generator, size: int) -> np.ndarray:
    return rng.multinomial(N_INSTANTS, np.full(N_INSTANTS, 1.0 / N_INSTANTS), size=size).astype(float)


def test_resampled_slopes_are_the_weighted_within_pair_least_squares():
    rng = np.random.default_rng(5)
    records, weights = shuffled_records(rng), resample_weights(rng, 6)
    refits = Cells.of(records).slopes(weights)
    expected = np.array([weighted_within_pair_slopes(records, w) for w in weights])
    np.testing.assert_allclose(refits, expected, rtol=1e-10)


@pytest.mark.parametrize("instants_per_block", [1, 3, 7])
def test_slopes_are_the_same_summed_in_many_blocks_of_instants(monkeypatch, instants_per_block):
    rng = np.random.default_rng(6)
    records, weights = shuffled_records(rng), resample_weights(rng, 5)
    in_one_block = Cells.of(records).slopes(weights)
    monkeypatch.setattr(slope_fits, "MAX_CELLS", instants_per_block * N_SUBJECTS * PARTNERS * 5)
    np.testing.assert_allclose(Cells.of(records).slopes(weights), in_one_block, rtol=1e-12)


def test_a_subject_whose_resampled_times_do_not_vary_gets_no_slope():
    rng = np.random.default_rng(7)
    records = shuffled_records(rng)
    only_one_instant = np.zeros((1, N_INSTANTS))
    only_one_instant[0, 3] = N_INSTANTS
    assert np.isnan(Cells.of(records).slopes(only_one_instant)).all()


def test_the_dense_cell_sums_give_the_slopes_the_records_give():
    """A council's panel (every pair scored at most instants) sums through the instants x pairs
    matrix of cell sums; the slopes are those of summing each record, to rounding."""
    rng = np.random.default_rng(9)
    records, weights = shuffled_records(rng), resample_weights(rng, 30)
    cells = Cells.of(records)
    assert cells.dense is not None
    over_records = msgspec.structs.replace(cells, dense=None).slopes(weights)
    np.testing.assert_allclose(cells.slopes(weights), over_records, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(np.isnan(cells.slopes(weights)), np.isnan(over_records))


def test_a_sparse_panel_sums_over_its_records():
    """Many pairs each scored at few instants: a dense instants x pairs matrix would be mostly 0."""
    rng = np.random.default_rng(10)
    n = 600
    instant = rng.integers(0, 200, n)
    records = Records(instant, np.arange(n), np.arange(n) % 3, np.arange(n) % 150, instant / 7.0,
                      rng.normal(size=n), 200, 3)
    assert Cells.of(records).dense is None
