"""The hierarchical model on real judge data (MT-bench single grading by GPT-4 under four
judge prompts, and FastChat's Vicuna-80 reviews by GPT-4 and GPT-3.5), through `bias-report
--method bayes` as a user runs it. The figures it is checked against are computed here from
the published files with plain Python and numpy; it raises no flag the data cannot support
and says what the design cannot identify."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from tests import realdata
from tests.analysis.test_real_data import GPT35_RUN, within_session_r
from tests.conftest import Cli

GPT4_SAME_ANSWERS = "vicuna-13b-20230322-new-hp-fp16"


def bayes_report(folder, arguments: list[str]) -> dict:
    cli = Cli(folder / "council.db")
    assert cli(*arguments).exit_code == 0
    result = cli("bias-report", "--json", "--method", "bayes")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def mt_bench(tmp_path_factory):
    return bayes_report(tmp_path_factory.mktemp("mt_bench_bayes"), realdata.mt_bench_import())


def raw_quality() -> dict[str, float]:
    """Each model's mean score less its session's mean (question x turn), centred over models."""
    sessions = defaultdict(list)
    for j in realdata.mt_bench_judgments():
        if j["score"] != realdata.NO_RATING:
            sessions[(j["question_id"], j["turn"])].append((j["model"], j["score"]))
    below = defaultdict(list)
    for rows in sessions.values():
        if len(rows) > 1:
            mean = np.mean([score for _, score in rows])
            for model, score in rows:
                below[model].append(score - mean)
    means = {model: float(np.mean(values)) for model, values in below.items()}
    centre = np.mean(list(means.values()))
    return {model: value - centre for model, value in means.items()}


def test_mt_bench_qualities_hold_the_raw_within_question_means(mt_bench):
    raw = raw_quality()
    part = mt_bench["hierarchical"]
    assert {m["model_id"] for m in part["models"]} == set(raw)
    for m in part["models"]:
        quality = m["quality"]
        assert quality["ci_low"] < raw[m["model_id"]] < quality["ci_high"], m["model_id"]
        assert quality["estimate"] == pytest.approx(raw[m["model_id"]], abs=0.05)
        assert (quality["n_sessions"], quality["confidence"]) == (160, "high")
    assert raw["mistral-orpo-trl"] == pytest.approx(0.702, abs=1e-3)


def test_mt_bench_raises_no_flag_as_the_raw_length_link_is_nil(mt_bench):
    texts = realdata.mt_bench_answer_texts()
    sized = [(j, realdata.graded_length(j, texts)) for j in realdata.mt_bench_judgments()
             if j["score"] != realdata.NO_RATING]
    sized = [(j, n) for j, n in sized if n is not None]
    r = within_session_r([(j["question_id"], j["turn"]) for j, _ in sized], np.log1p([n for _, n in sized]),
                         np.array([j["score"] for j, _ in sized], dtype=float))
    assert abs(r) < 0.05
    part = mt_bench["hierarchical"]
    assert part["flags"] == []
    assert part["length"]["ci_low"] < 0 < part["length"]["ci_high"]


def test_mt_bench_one_prompt_per_question_leaves_severity_unidentified(mt_bench):
    part = mt_bench["hierarchical"]
    assert all(r["severity"] is None and r["stable_since"] is None for r in part["reviewers"])
    assert {s["component"] for s in part["prior"]} == {"candidate", "length", "answer"}
    assert "hierarchical model: severity is not identified (no session has scores by two reviewers)" \
        in mt_bench["warnings"]


def test_two_judges_on_the_same_answers_are_not_pooled_and_agree_on_the_length_sign(tmp_path):
    report = bayes_report(tmp_path, realdata.fastchat_import(GPT4_SAME_ANSWERS, GPT35_RUN))
    part = report["hierarchical"]
    spreads = {s["component"]: s for s in part["prior"]}
    assert spreads["slot"]["sd"] is None and spreads["slot"]["n"] == 2  # two judges: a flat prior
    answers = realdata.fastchat_answers()
    for run in (GPT4_SAME_ANSWERS, GPT35_RUN):  # each judge's raw within-pair slope of score on log length
        pairs = [(np.log1p(len(answers[r["answer1_id"]]["text"])) - np.log1p(len(answers[r["answer2_id"]]["text"])),
                  r["score"][0] - r["score"][1]) for r in realdata.fastchat_reviews(run) if -1 not in r["score"]]
        length, score = np.array(pairs).T
        assert length @ score / (length @ length) > 0
    assert [(f["kind"], f["statement"]) for f in part["flags"]] == [("verbosity", "longer answers score higher")]
    assert all(r["length"]["estimate"] > 0 for r in part["reviewers"])
