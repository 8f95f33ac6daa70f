"""session_cells: a cell's lowest and highest score found a run of its records at a time (by
a reshape where every run is as long, by reduceat elsewhere) are each record's minimum and
maximum, whether a cell's records come in one run or two (a session's second packed part);
the tally of constant cells adds chunks up as the window's whole."""

from __future__ import annotations

import numpy as np
import pytest

from council_db.analysis.sessions.session_cells import Tally, extremes, sums_of


def by_record(group: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    low, high = np.full(size, np.inf), np.full(size, -np.inf)
    np.minimum.at(low, group, values)
    np.maximum.at(high, group, values)
    return low, high


def cells_in_runs(sessions: int, reviewers: int, answers: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Sessions of ``reviewers`` x ``answers`` records, a reviewer's records one run, the
    reviewers in a different order in each session; scores on a 1-10 scale."""
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((sessions, reviewers)), axis=1)
    cell = np.repeat((np.arange(sessions)[:, None] * reviewers + order).ravel(), answers)
    return cell, rng.integers(1, 11, len(cell)).astype(float)


@pytest.mark.parametrize("answers", [1, 4, 7])
def test_runs_of_one_length_give_each_cells_extremes(answers):
    cell, score = cells_in_runs(300, 4, answers, seed=answers)
    size = 300 * 4 + 8  # and some empty cells
    for mine, expected in zip(extremes(cell, score, size), by_record(cell, score, size)):
        np.testing.assert_array_equal(mine, expected)


def test_runs_of_other_lengths_and_a_cell_in_two_runs_give_each_cells_extremes():
    cell, score = cells_in_runs(300, 4, 4, seed=1)
    cell = np.r_[cell[:3], cell[5:], cell[4:5]]  # a short run, and a cell's record in a later part
    score = np.r_[score[:3], score[5:], [0.5]]
    for mine, expected in zip(extremes(cell, score, 1_200), by_record(cell, score, 1_200)):
        np.testing.assert_array_equal(mine, expected)
    assert extremes(np.zeros(0, dtype=np.int64), np.zeros(0), 3)[0].tolist() == [np.inf] * 3


def test_the_chunks_tallies_add_up_to_the_windows():
    cell, score = cells_in_runs(400, 3, 3, seed=2)
    score[::5] = 7.0
    score[:90] = 7.0  # ten whole sessions constant
    session, reviewer = cell // 3, cell % 3
    whole = sums_of(session, reviewer, score, (400, 3)).tally
    first = sums_of(session[:1800], reviewer[:1800], score[:1800], (200, 3)).tally
    second = sums_of(session[1800:] - 200, reviewer[1800:], score[1800:], (200, 3)).tally
    added = Tally(np.zeros(0), np.zeros(0)) + first + second
    np.testing.assert_array_equal(added.cells, whole.cells)
    np.testing.assert_array_equal(added.constant, whole.constant)
    assert whole.share()[3] >= 30 / 1200
