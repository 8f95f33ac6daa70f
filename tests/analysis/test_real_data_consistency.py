"""One report, one set of counts and tests that mean something (issue 15, on real judge data):
the window counts every session and each metric the sessions it rests on (and the text says
which); two judges' mirror-image affinities are one test; test-retest and raw slot means are
figures, not tests against 0. Every expected figure is derived here from the published files."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from council_db.contract.reviewer_identity import Identity
from tests import realdata
from tests.conftest import Cli

GPT4_RUN = "vicuna-13b-20230322-clean-lang"  # one review with a 0 (off the 1-10 scale)
GPT4_SAME_ANSWERS = "vicuna-13b-20230322-new-hp-fp16"
GPT35_RUN = "gpt-3.5-turbo_review_vicuna-13b-20230322-new-hp-fp16"
JUDGE = {GPT4_RUN: "gpt-4", GPT4_SAME_ANSWERS: "gpt-4", GPT35_RUN: "gpt-3.5-turbo"}


def reports(folder: Path, arguments: list[str]) -> tuple[dict, str]:
    """The JSON and the text bias report after ``council-db import ARGUMENTS`` into a new SQLite file."""
    cli = Cli(folder / "council.db")
    assert cli(*arguments).exit_code == 0
    as_json, as_text = cli("bias-report", "--format", "json"), cli("bias-report", "--wide")  # each line whole
    assert as_json.exit_code == 0 and as_text.exit_code == 0, as_json.output
    return json.loads(as_json.stdout), as_text.stdout


def on_scale(score: float) -> bool:
    return 1 <= score <= 10


@pytest.fixture(scope="module", params=[(GPT4_RUN,), (GPT4_SAME_ANSWERS, GPT35_RUN)], ids=["gpt4", "two_judges"])
def fastchat(request, tmp_path_factory):
    """The report on these runs, and their rated reviews as (judge, review) pairs."""
    runs = request.param
    report, text = reports(tmp_path_factory.mktemp("fastchat"), realdata.fastchat_import(*runs))
    rated = [(JUDGE[run], review) for run in runs for review in realdata.fastchat_reviews(run)
             if realdata.NO_RATING not in review["score"]]
    return report, text, rated


def test_the_window_counts_every_session_and_the_joint_model_the_sessions_it_rests_on(fastchat):
    """A review with one score off the scale is a session of one record: it counts in the
    window, but the joint model (a fixed effect per session) learns nothing from it."""
    report, text, rated = fastchat
    window = sum(any(on_scale(s) for s in review["score"]) for _, review in rated)
    fitted = [review for _, review in rated if all(on_scale(s) for s in review["score"])]
    assert (window, len(fitted)) == ((320, 319) if len(rated) == 320 else (718, 717))
    assert report["window"]["sessions"] == window
    for effect in ("adjusted_effect", "adjusted_effect_per_log_length"):
        assert (report["length"][effect]["n_sessions"], report["length"][effect]["n_records"]) \
            == (len(fitted), 2 * len(fitted))
    answers = realdata.fastchat_answers()
    per_model = defaultdict(set)
    for review in fitted:
        for answer_id in (review["answer1_id"], review["answer2_id"]):
            per_model[answers[answer_id]["model_id"]].add(id(review))
    for model in report["models"]:
        if model["quality"] is not None:
            assert model["quality"]["n_sessions"] == len(per_model[model["model_id"]])
    for effect in report["position"]["slot_effects"]:
        assert (effect["n_sessions"], effect["n_records"]) == (len(fitted), len(fitted))
    fitted_words = f"{len(fitted):,} sessions with two or more scores"
    assert any(fitted_words in warning and "joint model" in warning for warning in report["warnings"])
    counts = [(int(n.replace(",", "")), rest) for n, rest in re.findall(r"(\d[\d,]*) sessions(.{0,30})", text)]
    assert {n for n, _ in counts} >= {window, len(fitted)}
    for n, rest in counts:
        if n == len(fitted):
            assert rest.startswith(" with two or more scores"), f"{n} sessions{rest}: of what?"


def test_raw_means_are_figures_and_the_joint_models_effects_are_the_tests(fastchat):
    """A slot's (or a judge's) mean score is never 0 on a 1-10 scale; testing it against 0 says
    nothing, and against the other slot it would mix position with which models sat where."""
    report, _, rated = fastchat
    for reviewer in report["reviewers"]:
        scores = [s for judge, review in rated if judge == reviewer["reviewer_id"] for s in review["score"]
                  if on_scale(s)]
        assert reviewer["raw_mean"]["estimate"] == pytest.approx(np.mean(scores))
        assert reviewer["raw_mean"]["p_value"] is None
    for mean in report["position"]["slot_means"]:
        slot = mean["position"]
        scores = [review["score"][slot] for _, review in rated if on_scale(review["score"][slot])]
        assert (mean["estimate"], mean["n_records"]) == (pytest.approx(np.mean(scores)), len(scores))
        assert mean["ci_low"] < mean["estimate"] < mean["ci_high"]
        assert mean["p_value"] is None
    if len(rated) > 320:  # the two judges: slot effects are identified, and tested
        assert all(effect["p_value"] is not None for effect in report["position"]["slot_effects"])


def judge_by_model_counts(rated: list[tuple[str, dict]]) -> dict[str, set[str]]:
    answers, judges = realdata.fastchat_answers(), defaultdict(set)
    for judge, review in rated:
        for answer_id, score in zip((review["answer1_id"], review["answer2_id"]), review["score"]):
            if on_scale(score):
                judges[answers[answer_id]["model_id"]].add(judge)
    return judges


def test_with_two_judges_of_a_candidate_their_mirror_image_affinities_are_one_test(fastchat):
    """The joint model's residuals sum to zero over each candidate's scores: with two judges,
    one judge's liking for a candidate is the other's dislike, the same contrast twice."""
    report, text, rated = fastchat
    judges = judge_by_model_counts(rated)
    cells = {(c["reviewer_id"], c["model_id"]): c for c in report["affinity"]}
    flagged = [f["subject"].split(" -> ") for f in report["flags"] if f["kind"] == "affinity"]
    if len(set().union(*judges.values())) < 2:
        assert all(c["mirror_of"] is None for c in cells.values())
        return
    assert all(len(found) == 2 for found in judges.values()) and len(judges) == 5
    tested = [c for c in cells.values() if c["mirror_of"] is None]
    assert sorted(c["model_id"] for c in tested) == sorted(judges), "one test per candidate"
    for (reviewer, model), cell in cells.items():
        other = next(c for (r, m), c in cells.items() if m == model and r != reviewer)
        total = cell["residual_mean"]["estimate"] * cell["residual_mean"]["n_records"]
        assert total == pytest.approx(-other["residual_mean"]["estimate"] * other["residual_mean"]["n_records"])
        if cell["mirror_of"] is not None:
            assert cell["mirror_of"] == f"{other['reviewer_id']} -> {model}" and other["mirror_of"] is None
    assert flagged and len({model for _, model in flagged}) == len(flagged), "no candidate flagged twice"
    assert "mirror" in text


def test_test_retest_is_reported_as_a_figure_with_its_n_and_ci_not_a_test_against_zero(tmp_path):
    """MT-bench grades three published answers twice (the other repeats graded an answer since
    replaced), by two of gpt-4's prompts (two judges); a mean |difference| is never below 0, so a
    p-value against 0 would call any disagreement significant."""
    report, _ = reports(tmp_path, realdata.mt_bench_import())
    texts, grades = realdata.mt_bench_answer_texts(), defaultdict(list)
    for j in realdata.mt_bench_judgments():
        if j["score"] != realdata.NO_RATING and realdata.graded_length(j, texts) is not None:
            judge = Identity(j["judge"][0], prompt=j["judge"][1]).label  # the judge model with its prompt
            grades[(judge, j["question_id"], j["turn"], j["model"])].append(j["score"])
    pairs = {key: g for key, g in grades.items() if len(g) == 2}
    assert len(pairs) == 3 and all(len(g) <= 2 for g in grades.values())
    by_judge = defaultdict(list)
    for (judge, *_), grade in pairs.items():
        by_judge[judge].append(grade)
    retests = {retest["reviewer_id"]: retest for retest in report["self_consistency"]["reviewers"]}
    assert retests.keys() == by_judge.keys()
    for judge, judge_pairs in by_judge.items():
        figure = retests[judge]["mean_abs_difference"]
        assert retests[judge]["pairs"] == len(judge_pairs) and figure["n_records"] == 2 * len(judge_pairs)
        assert figure["estimate"] == pytest.approx(np.mean([abs(a - b) for a, b in judge_pairs]))
        if len(judge_pairs) > 1:
            assert figure["ci_low"] <= figure["estimate"] <= figure["ci_high"]
        else:  # one pair has no spread to resample
            assert figure["ci_low"] is None and figure["ci_high"] is None
        assert figure["p_value"] is None
