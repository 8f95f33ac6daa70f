"""The leaderboard's ppi method on simulated judges and people: a judge biased per candidate,
people rating a tenth of the sessions. Its intervals hold the people's candidate means where
the judges' own do not, and are narrower than the rated sessions' alone (the long study:
benchmarks/bench_ppi.py)."""

from __future__ import annotations

from typing import Any

import pytest

from council_db.analysis.aggregation.calibrated_by_people import MEAN_SCORE, WIN_RATE, people_calibrated
from council_db.analysis.loading.score_data import keep_records
from council_db.errors import CouncilDbError
from tests.analysis.reference.reference_data import simulated_data

QUALITY = {"a": 0.6, "b": 0.2, "c": -0.2, "d": -0.6}
# The judge is a point too generous and rewards length, half a point per SD of log length (a bias
# per candidate, as the models' answer lengths differ); the humans are unbiased and noisier. base
# 5.5 keeps clipping at 10 rare, so each candidate's mean human score is base + quality.
PLANTED: dict[str, Any] = dict(
    models=list(QUALITY), model_quality=QUALITY, reviewers=["judge"], humans=["h1", "h2", "h3"],
    humans_per_session=2, reference_share=0.1, base_score=5.5, answer_sd=1.0, noise_sd=1.0,
    reviewer_offsets={"judge": 1.0}, reviewer_verbosity={"judge": 0.5}, reviewer_noise_sd={"judge": 0.5})


def test_ppi_covers_the_peoples_candidate_means_where_the_judges_alone_do_not_and_beats_the_rated_sessions_alone():
    covered = judges_covered = narrower = intervals = 0
    for seed in range(6):
        data, truth = simulated_data(**PLANTED, sessions=600, seed=seed)
        ranking = people_calibrated(data, truth["reviewer_kinds"])
        assert ranking.quality == MEAN_SCORE and ranking.judges == ["judge"] and ranking.reference_kind == "human"
        assert 40 <= ranking.labelled_sessions <= 80 and ranking.labelled_sessions + ranking.unlabelled_sessions == 600
        for found in ranking.candidates:
            people = truth["base_score"] + QUALITY[found.standing.model]
            intervals += 1
            covered += found.standing.score.covers(people)
            judges_covered += found.judges_only.covers(people)
            width = found.standing.score.ci_high - found.standing.score.ci_low
            narrower += width < found.labelled_only.ci_high - found.labelled_only.ci_low
            assert found.judge_bias.estimate > 0, "the judge is a point too generous, give or take length"
    assert covered >= intervals - 3
    assert judges_covered == 0
    assert narrower >= intervals - 2


def test_the_ranking_is_best_first_with_rank_intervals_from_the_cis():
    data, truth = simulated_data(**dict(PLANTED, sessions=2000, reference_share=0.3, seed=11))
    ranking = people_calibrated(data, truth["reviewer_kinds"])
    assert [c.standing.model for c in ranking.candidates] == ["a", "b", "c", "d"]
    assert [c.standing.rank for c in ranking.candidates] == [1, 2, 3, 4]
    assert ranking.candidates[0].standing.rank_low == 1 and ranking.candidates[-1].standing.rank_high == 4


def test_two_answers_a_session_rank_by_win_rate_on_the_verdicts():
    data, truth = simulated_data(**dict(PLANTED, sessions=3000, reference_share=0.3, candidates_per_session=2, seed=2))
    ranking = people_calibrated(data, truth["reviewer_kinds"])
    assert ranking.quality == WIN_RATE
    for found in ranking.candidates:
        for estimate in (found.standing.score, found.judges_only, found.labelled_only):
            assert 0.0 <= estimate.estimate <= 1.0
    assert ranking.candidates[0].standing.model == "a" and ranking.candidates[-1].standing.model == "d"


def test_a_judges_scores_of_its_own_answers_are_left_out_unless_kept():
    config = dict(PLANTED, models=["a", "b", "c"], model_quality={}, reviewers=["a", "b"],
                  self_preference=2.0, reviewer_offsets={}, reviewer_verbosity={}, reviewer_noise_sd={}, sessions=400,
                  seed=4)
    data, truth = simulated_data(**config)
    left_out = {c.standing.model: c for c in people_calibrated(data, truth["reviewer_kinds"]).candidates}
    kept = {c.standing.model: c for c in people_calibrated(data, truth["reviewer_kinds"], include_self=True).candidates}
    assert abs(left_out["a"].judge_bias.estimate) < 0.3
    assert kept["a"].judge_bias.estimate == pytest.approx(1.0, abs=0.3), "half its judges' scores are its own, +2"


def test_a_window_without_people_or_without_judges_is_refused_saying_what_to_do():
    data, _ = simulated_data(**PLANTED, sessions=50)
    with pytest.raises(CouncilDbError, match="no reviewer in this window is a human rater or a gold label: mark"):
        people_calibrated(data, {})
    everyone_human = dict.fromkeys(data.reviewers, "human")
    with pytest.raises(CouncilDbError, match="every reviewer in this window is a human rater or a gold label"):
        people_calibrated(data, everyone_human)


def test_raters_scoring_on_another_scale_are_named_with_both_scales():
    data, truth = simulated_data(**PLANTED, sessions=50)
    judges_only = data.reviewers.index("judge")
    data = keep_records(data, data.reviewer == judges_only)
    data.excluded["other_scale:1-5"] = 120
    with pytest.raises(CouncilDbError, match=r"scores are on 1-10, but none of its human or gold raters' are "
                                             r"\(other scales in the window: 1-5 \(120 records\)\)"):
        people_calibrated(data, truth["reviewer_kinds"])


def test_judges_scoring_on_another_scale_than_the_raters_majority_are_named_too():
    data, truth = simulated_data(**PLANTED, sessions=50)
    data = keep_records(data, data.reviewer != data.reviewers.index("judge"))
    data.excluded["other_scale:0-1"] = 80
    with pytest.raises(CouncilDbError, match=r"none of its judges' are \(other scales in the window: 0-1 \(80"):
        people_calibrated(data, truth["reviewer_kinds"])
