"""A judge's biases against the reference raters' own: planted length and first-slot effects
recovered as the judge's minus the humans', self-preference beyond what the humans see, and
the pull of length towards the answer the humans judged worse."""

from __future__ import annotations

import pytest

from council_db.analysis.reference.summary import reference_summary
from tests.analysis.reference.reference_data import simulated_data

HUMANS = dict(humans=["h1", "h2", "h3"], answer_sd=1.0, base_score=5.5)


@pytest.fixture(scope="module")
def planted():
    """Four answers a session: 'wordy' rewards length 0.8 points per SD where the humans reward
    0.3 (as people do), 'first' gives the first-shown answer 0.6 more, 'plain' neither; a shared
    primacy of 0.3 for everyone (humans too) must cancel."""
    data, truth = simulated_data(
        sessions=400, seed=8, models=["a", "b", "c", "d"], reviewers=["wordy", "first", "plain"],
        reviewer_verbosity={"wordy": 0.8, "first": 0.3, "plain": 0.3, "h1": 0.3, "h2": 0.3, "h3": 0.3},
        reviewer_position_effects={"first": [0.6]}, position_effects=[0.3], **HUMANS)
    return {j.judge: j for j in reference_summary(data, truth["reviewer_kinds"]).judges}


def test_a_judges_length_effect_is_measured_against_the_humans_own(planted):
    assert planted["wordy"].length.difference.covers(0.5) and planted["wordy"].length.difference.p_value < 1e-4
    assert planted["wordy"].length.reference.covers(0.3)
    assert planted["plain"].length.difference.covers(0.0)


def test_a_judges_first_slot_preference_is_measured_against_the_humans_own(planted):
    assert planted["first"].first_slot.difference.covers(0.6) and planted["first"].first_slot.reference.covers(0.3)
    assert planted["plain"].first_slot.difference.covers(0.0)


def test_length_pulls_a_wordy_judge_towards_the_answer_people_judged_worse(planted):
    assert planted["wordy"].reasoning_chain.estimate > 0 and planted["wordy"].reasoning_chain.p_value < 1e-3
    assert planted["plain"].reasoning_chain.ci_low < planted["wordy"].reasoning_chain.ci_low


def test_self_preference_is_what_the_judge_adds_beyond_the_reference_verdict():
    data, truth = simulated_data(sessions=300, seed=9, models=["a", "b", "c"], self_preference=2.0, **HUMANS)
    judges = {j.judge: j for j in reference_summary(data, truth["reviewer_kinds"]).judges}
    assert set(judges) == {"a", "b", "c"}
    for judge in judges.values():
        found = judge.self_preference
        assert found.excess.estimate > 0.2 and found.excess.p_value < 1e-3
        assert found.own_when_reference_prefers_other.estimate > found.excess.estimate
    data, truth = simulated_data(sessions=300, seed=9, models=["a", "b", "c"], **HUMANS)
    fair = reference_summary(data, truth["reviewer_kinds"]).judges
    assert sum(j.self_preference.excess.covers(0.0) for j in fair) >= 2


def test_a_judge_that_is_no_candidate_has_no_self_preference(planted):
    assert planted["plain"].self_preference is None
