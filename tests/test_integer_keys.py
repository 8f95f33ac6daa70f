"""council_db.integer_keys: integer keys sorted as one number give np.lexsort's order."""

import numpy as np

from council_db.integer_keys import sort_order


def test_sort_order_is_lexsorts_order_by_one_key_or_by_lexsort():
    """Integer keys sorted as one number give np.lexsort's order (stable among equal rows,
    negative codes too); keys too wide for one int64, or floats, take np.lexsort itself."""
    rng = np.random.default_rng(5)
    for keys in ([rng.integers(0, 1000, 4000), rng.integers(-1, 4, 4000), rng.integers(0, 3, 4000)],
                 [rng.integers(0, 2 ** 40, 3000), rng.integers(0, 2 ** 30, 3000)],  # past 2^62: lexsort
                 [rng.integers(0, 5, 3000), rng.normal(size=3000).round(1)]):
        np.testing.assert_array_equal(sort_order(*keys), np.lexsort(keys[::-1]))
    assert len(sort_order(np.zeros(0, dtype=np.int64))) == 0
