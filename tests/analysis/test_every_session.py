"""Every session screened: the anomaly tests' sums from one SQL pass over the store give the
p-values the records in memory give (to 1e-9), on both backends, and a store's unknown
answer lengths and excluded records are handled as the fit handles them."""

from __future__ import annotations

import numpy as np
import pytest

from council_db.analysis.joint import joint_model
from council_db.analysis.loading.window import Window, load_sample
from council_db.analysis.sessions import anomalies, every_session
from council_db.analysis.sessions.session_cells import of_records
from tests.conftest import both_backends, simulated, write_jsonl


def _imported(cli, tmp_path, **config) -> None:
    records, _ = simulated(**config)
    for i, record in enumerate(records):
        if i % 37 == 0:  # some answer lengths unknown: the fit centres them within their session
            record["response_length_chars"] = None
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", records))).exit_code == 0


def _p_by_key(tests, keys) -> dict[str, float]:
    return {keys[g]: float(tests.p_value[g]) for g in np.flatnonzero(tests.tested)}


@both_backends
def test_the_streamed_pass_gives_the_p_values_of_the_records_in_memory_to_1e_9(cli, db, tmp_path):
    _imported(cli, tmp_path, sessions=150, seed=3, anomaly_rate=0.03, verbosity=0.3, position_effects=[0.2])
    window = Window()
    data = load_sample(db, window, 0).data
    fit = joint_model.fit(data)
    in_memory = anomalies.session_tests(of_records(data, fit.residuals))
    cells = every_session.every_session(db, window, data, fit)
    assert cells is not None
    streamed = anomalies.session_tests(cells)
    with db.reading() as reader:
        key_of = dict(reader.rows("SELECT id, session_key FROM sessions"))
    expected = _p_by_key(in_memory, data.session_keys)
    got = _p_by_key(streamed, [key_of[int(i)] for i in cells.session_ids])
    assert got.keys() == expected.keys() and len(got) == 150
    assert max(abs(got[k] - expected[k]) for k in got) <= 1e-9
    assert min(got.values()) < 1e-4  # the planted broken sessions are in it: the comparison is not all ones
