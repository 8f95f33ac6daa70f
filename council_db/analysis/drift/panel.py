"""Whether the reviewer panel (or the candidate set) changes over the window: a reviewer that
joins late or leaves early. Its likes and dislikes then arrive or leave with it, and a trend
pooled over reviewers would read that as a candidate drifting. Trends are fitted within
(reviewer, candidate) pairs (``slope_fits``), which composition cannot move; the report still
says when the panel changed, since averages over the window mix the two panels.
"""

from __future__ import annotations

import numpy as np

from council_db.analysis.drift.subjects import Kind, codes_and_names
from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.stats.unique_rows import distinct
from council_db.contract.timestamps import format_us

EDGE = 0.25  # absent from the window's first or last quarter of distinct times
MIN_SESSIONS = 20  # a subject in this many sessions misses a quarter by chance with p < 0.75^20 = 0.3%


def changes(data: ScoreData) -> list[str]:
    """One warning per reviewer (then candidate) that scores (is scored) only in part of the window."""
    dated = data.session_ts_us >= 0
    times = distinct(data.session_ts_us[dated])
    if len(times) < 4:
        return []
    early, late = times[int(EDGE * len(times))], times[int((1 - EDGE) * len(times)) - 1]
    return [line for kind in ("reviewer", "model") for line in _changes(data, kind, dated, early, late)]


def _changes(data: ScoreData, kind: Kind, dated: np.ndarray, early: int, late: int) -> list[str]:
    codes, names = codes_and_names(data, kind)
    ts = data.session_ts_us[data.session]
    use = dated[data.session]
    out = []
    total = int(dated.sum())
    rows = np.flatnonzero(use)
    rows = rows[np.argsort(codes[rows], kind="stable")]  # each subject's rows, ascending: one sort, not a mask each
    present, starts = np.unique(codes[rows], return_index=True)
    for code, mine in zip(present.tolist(), np.split(rows, starts[1:])):
        sessions = len(distinct(data.session[mine]))
        first, last = int(ts[mine].min()), int(ts[mine].max())
        if sessions < MIN_SESSIONS or (first < early and last > late):
            continue
        if kind == "reviewer":
            out.append(f"the reviewer panel changes over the window: reviewer {names[code]} scores only from "
                       f"{format_us(first)} to {format_us(last)} ({sessions:,} of {total:,} sessions); candidate "
                       "trends are fitted within each (reviewer, candidate) pair, so this does not read as a "
                       "candidate drifting, but window averages mix the two panels")
        else:
            out.append(f"the candidate set changes over the window: candidate {names[code]} is scored only from "
                       f"{format_us(first)} to {format_us(last)} ({sessions:,} of {total:,} sessions); reviewer "
                       "trends are fitted within each (reviewer, candidate) pair, so this does not read as a "
                       "reviewer drifting, but window averages mix the two sets")
    return out
