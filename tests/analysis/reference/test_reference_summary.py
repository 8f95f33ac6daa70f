"""Every comparison with the reference per judge: who the reference is, what a window without
one gets, and the alternative annotator test on simulated people."""

from __future__ import annotations

import pytest

from council_db.analysis.reference.summary import Settings, reference_summary
from tests.analysis.reference.reference_data import PAIRWISE, simulated_data


@pytest.fixture(scope="module")
def pairwise():
    data, truth = simulated_data(sessions=200, seed=21, gold="key", **PAIRWISE)
    return data, truth, reference_summary(data, truth["reviewer_kinds"])


def test_only_judges_get_an_entry_and_people_are_the_reference(pairwise):
    _, _, summary = pairwise
    assert summary.reference_kind == "human" and summary.raters == ["h1", "h2", "h3", "h4", "h5"]
    assert [j.judge for j in summary.judges] == ["judge", "noisy", "twin"]
    for judge in summary.judges:
        assert judge.agreement is judge.pairwise.with_reference.agreement and judge.kappa.computable
        assert judge.pointwise is None and judge.gold.accuracy.of > 0
    assert summary.ceiling.pairwise.agreement.n_sessions == 200 and summary.ceiling.pointwise is None


def test_the_alternative_annotator_test_passes_a_judge_as_good_as_people_and_fails_a_noisy_one(pairwise):
    _, _, summary = pairwise
    tests = {j.judge: j.pairwise.replacement for j in summary.judges}
    assert all(len(t.comparisons) == 5 for t in tests.values())  # each human rated about 120 sessions
    assert tests["judge"].passed and tests["twin"].passed
    assert tests["noisy"].passed is False
    assert tests["judge"].advantage_probability > tests["noisy"].advantage_probability


def test_a_stricter_margin_and_more_humans_per_instance_are_settings(pairwise):
    data, truth, _ = pairwise
    strict = reference_summary(data, truth["reviewer_kinds"], Settings(epsilon=0.0, min_raters=4))
    assert all(j.pairwise.replacement is None for j in strict.judges)  # three humans a session: none has four
    loose = reference_summary(data, truth["reviewer_kinds"], Settings(epsilon=0.0))
    assert loose.judges[0].pairwise.replacement.epsilon == 0.0


def test_gold_labels_alone_are_the_reference_without_a_ceiling_or_a_replacement_test():
    data, truth = simulated_data(sessions=60, seed=2, models=["a", "b", "c"], reviewers=["j"],
                                 candidates_per_session=2, swap_orders=True, gold="key", answer_sd=1.0)
    summary = reference_summary(data, truth["reviewer_kinds"])
    assert summary.reference_kind == "gold" and summary.raters == ["key"]
    judge = summary.judges[0]
    assert judge.pairwise.with_raters is None and judge.pairwise.replacement is None
    assert summary.ceiling.headline is None and judge.gold.both_correct.of == 60


def test_a_window_without_reference_raters_has_no_summary_and_an_unknown_kind_is_refused():
    data, truth = simulated_data(sessions=20, seed=1)
    assert reference_summary(data, truth["reviewer_kinds"]) is None
    with pytest.raises(ValueError, match="reviewer kinds must be one of judge, human, gold"):
        reference_summary(data, {"openai/gpt-4o": "expert"})
