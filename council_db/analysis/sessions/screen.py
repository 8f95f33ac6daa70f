"""Which sessions `council-db anomalies` tests.

At or below the sample size the window's records are in memory and the tests read them.
Above it they read the report's sample's, or, with --every-session, the joint model is fitted
on that sample as before but the tests read every session's sums from one pass over the store
(``every_session``): a broken judge call is then found wherever it is, not only in the one
session of two hundred a 5,000-session sample holds at a million. The pass reads every record
of the window: at a million 4x4 sessions about 38 CPU seconds from the score rows, about 8 s
and 287 MB from the copy packed a string per session that `db pack` keeps (revision 0020),
within the 300 MB a command holds but over its 5 s (docs/benchmarks.md), which is why it is
asked for, not the default. Where it cannot be made (``every_session.why_not``) the sample serves
alone, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from council_db.analysis.joint.joint_model import JointFit
from council_db.analysis.loading.window import Window, WindowData
from council_db.analysis.sessions.anomalies import SessionAnomaly, SessionTests, session_tests
from council_db.analysis.sessions.every_session import every_session, why_not
from council_db.analysis.sessions.session_cells import of_records
from council_db.store.database import Database
from council_db.store.packing import is_on

IDS_AT_ONCE = 10_000  # session ids written into one lookup query
PACK_HINT = ("`council-db db pack` would make this pass about 6 times faster (6-7 s of CPU instead of 37-40 s at "
             "a million 4x4 sessions, docs/benchmarks.md) for ~455 bytes a session more on disk")


@dataclass(frozen=True)
class Screen:
    """The window's session tests (None: too few sessions to calibrate them) and what they covered."""

    tests: SessionTests | None
    every_session: bool  # False: a sample of the window's sessions
    window_sessions: int  # sessions in the window
    fitted_sessions: int  # sessions the joint model was fitted on
    db: Database | None  # where the sessions' keys are looked up; None: in ``loaded``
    loaded: WindowData
    why_sampled: str | None = None  # why --every-session could not test every session
    packed: bool = True  # False: every session's records read from the score rows (no `db pack`)

    def note(self) -> str:
        """What a sampled window's tests covered, for the command's stderr."""
        if self.every_session:
            return (f"every one of the window's {self.window_sessions:,} sessions tested, against the joint model "
                    f"fitted on a sample of {self.fitted_sessions:,} (the bias report's)" + ("" if self.packed else
                    f"; {PACK_HINT}"))
        sample = f"a sample of {self.fitted_sessions:,} of the window's {self.window_sessions:,} sessions tested"
        if self.why_sampled:
            return f"{sample}: --every-session cannot test the rest ({self.why_sampled})"
        return f"{sample} (the bias report's); --every-session tests them all"

    def tested(self) -> np.ndarray:
        """The indices of the tested sessions, in the tests' order."""
        return np.zeros(0, dtype=np.int64) if self.tests is None else np.flatnonzero(self.tests.tested)

    def described(self, indices: list[int]) -> list[tuple[SessionAnomaly, int]]:
        """These sessions' tests with their stored time (microseconds, -1: none)."""
        if self.db is None:
            data = self.loaded.data
            return [(self.tests.anomaly(g, data.session_keys[g]), int(data.session_ts_us[g])) for g in indices]
        ids = [int(self.tests.cells.session_ids[g]) for g in indices]
        found = _keys_and_times(self.db, ids)
        return [(self.tests.anomaly(g, found[i][0]), found[i][1]) for g, i in zip(indices, ids)]


def screen(db: Database, window: Window, loaded: WindowData, fit: JointFit, every: bool) -> Screen:
    """The tests of the sessions of ``loaded`` (the window's records or its sample's, ``fit``
    on them); with ``every``, of every session of ``window``, by one pass over the store where
    the records are a sample."""
    data = loaded.data
    why = None
    if every and loaded.window_sessions is not None:
        packed = is_on(db)
        cells = every_session(db, window, data, fit, packed=packed)
        if cells is not None:
            return Screen(session_tests(cells), True, loaded.window_sessions, data.n_sessions, db, loaded,
                          packed=packed)
        why = why_not(window, fit) or "a reviewer, candidate or display slot of the window is not in the sample"
    tests = session_tests(of_records(data, fit.residuals))
    sampled = loaded.window_sessions is not None
    return Screen(tests, not sampled, loaded.window_sessions if sampled else data.n_sessions, data.n_sessions, None,
                  loaded, why)


def _keys_and_times(db: Database, ids: list[int]) -> dict[int, tuple[str, int]]:
    """Session id -> its key and readable time (-1 where none), IDS_AT_ONCE ids a query."""
    out = {}
    with db.reading() as reader:
        for start in range(0, len(ids), IDS_AT_ONCE):
            listed = ", ".join(map(str, ids[start:start + IDS_AT_ONCE]))
            for number, key, ts_us in reader.rows(f"SELECT id, session_key, COALESCE(ts_us, -1) FROM sessions "
                                                  f"WHERE id IN ({listed})"):
                out[number] = (key, ts_us)
    return out
