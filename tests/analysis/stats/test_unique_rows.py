import numpy as np

from council_db.analysis.stats.unique_rows import unique_rows


def test_unique_rows_equal_numpy_unique_over_columns_including_empty_input():
    rng = np.random.default_rng(4)
    columns = [rng.integers(0, size, 5_000) for size in (900, 7, 5)]
    rows, inverse, counts = unique_rows(*columns)
    expected, expected_inverse, expected_counts = np.unique(np.stack(columns), axis=1, return_inverse=True,
                                                            return_counts=True)
    assert np.array_equal(rows, expected) and np.array_equal(counts, expected_counts)
    assert np.array_equal(inverse, expected_inverse.ravel())
    empty = np.zeros(0, dtype=np.int64)
    assert unique_rows(empty, empty)[0].shape == (2, 0)
