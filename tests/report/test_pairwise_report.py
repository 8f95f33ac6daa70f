"""The bias report on pairwise data (two answers per session, a verdict per call: win 1, tie
0.5, loss 0), read off FastChat's pairwise judgments and JudgeBench's outputs as a user
imports them: effects the design cannot identify are said to be so in every format, never
printed as a number or as "neutral"."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cli

PAIR = "tests/data/fastchat-pair/mt_bench"
IMPORTS = {
    "fastchat-pair": ["--from", "fastchat-pair", f"{PAIR}/model_judgment/gpt-4_pair.jsonl",
                      "--answers", f"{PAIR}/model_answer"],
    "judgebench": ["--from", "judgebench",
                   "tests/data/judgebench/outputs/dataset=judgebench,response_model=gpt-4o-2024-05-13,"
                   "judge_name=arena_hard,judge_model=gpt-4o-mini.jsonl",
                   "tests/data/judgebench/outputs/dataset=judgebench,response_model=gpt-4o-2024-05-13,"
                   "judge_name=reward_model,judge_model=Skywork_Skywork-Reward-Llama-3.1-8B.jsonl"],
}
LABEL = "not identified (pairwise)"


@pytest.fixture(scope="module", params=list(IMPORTS))
def store(request, tmp_path_factory) -> Cli:
    cli = Cli(tmp_path_factory.mktemp(request.param) / "council.db")
    assert cli("import", *IMPORTS[request.param]).exit_code == 0
    return cli


def report(cli: Cli, form: str) -> str:
    result = cli("bias-report", "--format", form, "--wide")
    assert result.exit_code == 0, result.output
    return result.stdout


def test_severity_on_pairwise_verdicts_reads_not_identified_in_json_with_its_reason(store):
    found = json.loads(report(store, "json"))
    assert [(r["severity"], r["severity_reason"], r["classification"]) for r in found["reviewers"]] == \
        [(None, LABEL, "unknown")] * len(found["reviewers"])
    said = found["not_identified"]
    assert said["label"] == LABEL and "the design fixes those totals" in said["reason"]
    assert "reviewer severity (harsh or generous)" in said["effects"]
    assert not [f for f in found["flags"] if f["kind"] in ("reviewer_severity", "trend", "change_point")]
    assert not [t for t in found["trends"] if t["kind"] == "reviewer"]


@pytest.mark.parametrize("form", ["text", "markdown"])
def test_severity_on_pairwise_verdicts_reads_not_identified_in_every_reviewer_row(store, form):
    printed = report(store, form).splitlines()
    for reviewer in json.loads(report(store, "json"))["reviewers"]:
        row = next(number for number, line in enumerate(printed) if reviewer["reviewer_id"] in line)
        assert LABEL in " ".join(printed[row:row + 2])  # a long name wraps its figures to the next line
    assert not [line for line in printed if "neutral" in line]
    assert f"reviewers (drift of severity): {LABEL}" in "\n".join(printed).replace("Reviewers", "reviewers")


def test_the_html_report_says_severity_is_not_identified_instead_of_not_estimated(store):
    page = report(store, "html")
    severity = page.split('id="severity"', 1)[1].split("</section>", 1)[0]
    assert f"Reviewer severity: {LABEL}" in severity
    assert "Not estimated" not in severity


def test_swapped_orders_are_stated_once_as_position_consistency_not_again_as_test_retest(store):
    # Before: "SELF-CONSISTENCY test-retest ... 25 pairs identical 0.52" beside the position
    # section's "swapped pairs: 13; same preference in both orders 0.54": one figure under two names.
    found = json.loads(report(store, "json"))
    assert found["position"]["swaps"]["swaps"] > 0
    assert found["self_consistency"]["measurable"] is False
    assert found["self_consistency"]["note"].startswith("the same as position consistency")
    printed = report(store, "text")
    assert "SELF-CONSISTENCY" not in printed and "test-retest" not in printed
    assert "same preference in both orders" in printed


def test_an_affinity_that_is_zero_by_construction_is_not_reported(store, request):
    # Before: on FastChat's pairwise judgments (one judge) "gpt-4 -> gpt-3.5-turbo" at -1.6e-17
    # (95% CI -0.20 to +0.20, p 1.00): a lone judge's residuals of a candidate add up to zero.
    # gpt-4's two prompts there are two judges now: --reviewer takes one of them alone.
    fastchat = request.node.callspec.params["store"] == "fastchat-pair"
    lone = ["--reviewer", "gpt-4 · prompt pair-v2"] if fastchat else []
    found = json.loads(store("bias-report", "--format", "json", *lone).stdout)
    assert found["reviewers"] and found["affinity"] == []
    assert "AFFINITY" not in store("bias-report", *lone).stdout
