"""Does the new judge grade like the old one (analysis/versions): the items two sides both
scored, their verdicts, and the figures on them: a planted shift is found at its size, a
candidate that alone moved is the one named, identical sides agree perfectly, and sides that
differ only by noise are called changed in at most about 5% of simulated sets."""

from __future__ import annotations

import numpy as np
import pytest

from council_db.analysis.versions.pairing import pair_items
from council_db.analysis.versions.same_items import compare

CANDIDATES = ["a", "b", "c", "d"]


def _two_judges(rng: np.random.Generator, sessions: int, shift: np.ndarray | float = 0.0, noise: float = 1.0):
    """Per record: session, candidate, score, side (True: the second judge); both judges score every
    candidate in every session, the second adding ``shift`` (per candidate, or one for all)."""
    quality = rng.normal(0.0, 1.0, (sessions, len(CANDIDATES)))
    first = 6.0 + quality + rng.normal(0.0, noise, quality.shape)
    second = 6.0 + quality + np.broadcast_to(shift, (len(CANDIDATES),)) + rng.normal(0.0, noise, quality.shape)
    session = np.repeat(np.arange(sessions), len(CANDIDATES))
    candidate = np.tile(np.arange(len(CANDIDATES)), sessions)
    return (np.r_[session, session], np.r_[candidate, candidate], np.r_[first.ravel(), second.ravel()],
            np.r_[np.zeros(first.size, bool), np.ones(first.size, bool)])


def _paired(session, candidate, score, second, scale="1-10"):
    return pair_items(session, candidate, score, ~second, second, CANDIDATES, scale)


def test_only_the_items_both_sides_scored_are_paired_and_the_rest_counted():
    session = np.array([0, 0, 0, 1, 1, 2])
    candidate = np.array([0, 1, 0, 0, 1, 2])
    score = np.array([5.0, 7.0, 6.0, 4.0, 8.0, 3.0])
    second = np.array([False, False, True, False, False, True])

    items = _paired(session, candidate, score, second)

    assert items.n_items == 1 and items.first.tolist() == [5.0] and items.second.tolist() == [6.0]
    assert (items.only_first, items.only_second) == (3, 1)


def test_the_verdict_is_the_top_choice_in_the_session_ties_included():
    session = np.array([0, 0, 0, 0, 0, 0])
    candidate = np.array([0, 1, 2, 0, 1, 2])
    score = np.array([9.0, 9.0, 2.0, 1.0, 3.0, 8.0])
    second = np.array([False, False, False, True, True, True])

    items = _paired(session, candidate, score, second)

    assert items.first_verdict.tolist() == [True, True, False]
    assert items.second_verdict.tolist() == [False, False, True]
    assert "top choice" in items.verdict


def test_on_a_0_1_scale_the_verdict_is_pass_at_one_half():
    session, candidate = np.zeros(4, np.int64), np.array([0, 1, 0, 1])
    items = _paired(session, candidate, np.array([0.4, 0.9, 0.6, 0.9]), np.array([False, False, True, True]), "0-1")

    assert items.first_verdict.tolist() == [False, True] and items.second_verdict.tolist() == [True, True]
    assert items.verdict.startswith("pass")


def test_identical_sides_never_flip_and_agree_perfectly():
    session, candidate, score, second = _two_judges(np.random.default_rng(1), 60, noise=0.0)

    found = compare(_paired(session, candidate, score, second), n_boot=200)

    assert found.flip_rate.estimate == 0.0 and found.mean_difference.estimate == pytest.approx(0.0, abs=1e-12)
    assert found.kappa.estimate == pytest.approx(1.0) and found.weighted_kappa.estimate == pytest.approx(1.0)
    assert not found.changed()


def test_a_planted_shift_is_found_at_its_size_with_n_and_a_ci():
    session, candidate, score, second = _two_judges(np.random.default_rng(2), 150, shift=0.5)

    found = compare(_paired(session, candidate, score, second), n_boot=400)

    assert found.mean_difference.covers(0.5) and found.mean_difference.ci_low > 0.0
    assert found.mean_difference.n_sessions == 150 and found.items == 600
    assert found.overall_q <= 0.05 and found.changed()
    assert 0.0 < found.flip_rate.ci_low < found.flip_rate.ci_high < 1.0
    assert found.weighted_kappa.ci_high < 1.0


def test_the_candidate_that_alone_moved_is_named_first_and_the_others_are_not_flagged():
    session, candidate, score, second = _two_judges(np.random.default_rng(3), 200, shift=np.array([0.0, 0.0, 1.0, 0.0]))

    found = compare(_paired(session, candidate, score, second), n_boot=200)

    moved = found.candidates[0]
    assert moved.candidate == "c" and moved.difference.covers(1.0) and moved.q_value <= 0.05
    assert all(c.q_value > 0.05 for c in found.candidates[1:])
    assert moved.items == 200 and moved.difference.n_sessions == 200


def test_sides_that_differ_only_by_noise_are_called_changed_in_few_sets():
    """The study (benchmarks/bench_diff.py) runs hundreds of sets; here 40 sets of 60 sessions bound the
    share: with the BH family at 5%, 6 or more false calls of 40 has probability below 2%."""
    rng = np.random.default_rng(4)
    calls = sum(compare(_paired(*_two_judges(rng, 60)), n_boot=0).changed() for _ in range(40))

    assert calls <= 5
