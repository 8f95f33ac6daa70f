"""The bias report on real pairwise judgments (FastChat's MT-bench pairs, JudgeBench's outputs)
states position and length as the Bradley-Terry model's odds, per judge and pooled, in every
format; the games each figure rests on and the raw first-shown share it is compared with are
counted here from the source files, not read off the report."""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import pytest

from council_db.contract.reviewer_identity import Identity
from tests.conftest import Cli

PAIR = Path("tests/data/fastchat-pair/mt_bench")
BENCH = Path("tests/data/judgebench/outputs")
JUDGEBENCH = {
    "gpt-4o-mini/arena_hard": BENCH / "dataset=judgebench,response_model=gpt-4o-2024-05-13,judge_name=arena_hard,"
                                      "judge_model=gpt-4o-mini.jsonl",
    "Skywork/Skywork-Reward-Llama-3.1-8B/reward_model":
        BENCH / "dataset=judgebench,response_model=gpt-4o-2024-05-13,judge_name=reward_model,"
                "judge_model=Skywork_Skywork-Reward-Llama-3.1-8B.jsonl",
}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def fastchat_games() -> dict[str, list[float]]:
    """Each judge's games as the source has them (the judge model with its prompt, judge[1]: gpt-4's
    two prompts are two judges): per verdict, the first-shown answer's result (game 1 shows model_1
    first, game 2 model_2), where the verdict is no error."""
    results: dict[str, list[float]] = {}
    for line in _lines(PAIR / "model_judgment" / "gpt-4_pair.jsonl"):
        judge = Identity(line["judge"][0], prompt=line["judge"][1]).label
        for winner, first in ((line["g1_winner"], "model_1"), (line["g2_winner"], "model_2")):
            if winner in ("model_1", "model_2", "tie"):
                results.setdefault(judge, []).append(0.5 if winner == "tie" else float(winner == first))
    return results


def judgebench_games() -> dict[str, list[float]]:
    """Per judge, each judgment's result for answer A, the one it was shown first."""
    result = {"A>>B": 1.0, "A>B": 1.0, "A=B": 0.5, "B>A": 0.0, "B>>A": 0.0}
    return {judge: [result[j["decision"]] for line in _lines(path) for j in line["judgments"]
                    if j is not None and j["decision"] is not None] for judge, path in JUDGEBENCH.items()}


IMPORTS = {
    "fastchat-pair": (["--from", "fastchat-pair", str(PAIR / "model_judgment" / "gpt-4_pair.jsonl"),
                       "--answers", str(PAIR / "model_answer")], fastchat_games),
    "judgebench": (["--from", "judgebench", *map(str, JUDGEBENCH.values())], judgebench_games),
}


@pytest.fixture(scope="module", params=list(IMPORTS))
def store(request, tmp_path_factory) -> tuple[Cli, dict[str, list[float]]]:
    cli = Cli(tmp_path_factory.mktemp(request.param) / "council.db")
    arguments, games = IMPORTS[request.param]
    assert cli("import", *arguments).exit_code == 0
    return cli, games()


def report(cli: Cli, form: str) -> str:
    result = cli("bias-report", "--format", form, "--wide")
    assert result.exit_code == 0, result.output
    return result.stdout


def length_unknown(found: dict, games: dict[str, list[float]]) -> int:
    """The games the fit left out for an unknown length, as its warning counts them out of all."""
    said = [w for w in found["warnings"] if "games left out: their answers' length is unknown" in w]
    if not said:
        return 0
    left, of = re.search(r"([\d,]+) of ([\d,]+) games left out", said[0]).groups()
    assert int(of.replace(",", "")) == sum(len(results) for results in games.values())
    return int(left.replace(",", ""))


def raw_odds(results: list[float]) -> float:
    """The raw first-shown share of decided games (ties left out) as odds s / (1 - s)."""
    won, lost = sum(r == 1.0 for r in results), sum(r == 0.0 for r in results)
    return won / lost


def test_first_shown_odds_per_judge_rest_on_the_games_counted_from_the_source(store):
    cli, games = store
    found = json.loads(report(cli, "json"))
    model, left_out = found["pairwise_model"], length_unknown(found, games)
    per_judge = {odds["judge"]: odds for odds in model["first_shown"] if odds["judge"] is not None}
    assert set(per_judge) == set(games)
    assert sum(odds["n_records"] for odds in per_judge.values()) == \
        sum(len(results) for results in games.values()) - left_out
    assert model["games"] == sum(len(results) for results in games.values()) - left_out
    pooled = model["first_shown"][0]
    assert pooled["n_records"] == model["games"] and (pooled["judge"] is None) == (len(games) > 1)
    for odds in model["first_shown"]:
        assert odds["odds_ratio"] == pytest.approx(math.exp(odds["estimate"]))
        assert odds["odds_ratio_ci_low"] == pytest.approx(math.exp(odds["ci_low"]))
        assert 0.0 <= odds["p_value"] <= 1.0


def test_the_model_odds_agree_with_the_raw_first_shown_share_on_a_design_that_shows_both_orders(store):
    # Both orders of every pair are judged, so the candidates are balanced across the slots and
    # the raw odds s / (1 - s) estimate what the model's odds do (the model adds ties and length).
    cli, games = store
    model = json.loads(report(cli, "json"))["pairwise_model"]
    judge, results = max(games.items(), key=lambda item: len(item[1]))
    odds = next(o for o in model["first_shown"] if o["judge"] == judge)
    raw = raw_odds(results)
    assert odds["odds_ratio_ci_low"] <= raw <= odds["odds_ratio_ci_high"]
    assert (odds["odds_ratio"] > 1) == (raw > 1)


def test_the_length_effect_is_an_odds_ratio_per_sd_of_the_normalised_length_difference(store):
    cli, games = store
    found = json.loads(report(cli, "json"))
    length = found["pairwise_model"]["length"]
    assert length["name"] == "length (characters), per SD"
    assert length["n_records"] == sum(len(results) for results in games.values()) - length_unknown(found, games)
    assert length["ci_low"] <= length["estimate"] <= length["ci_high"]


@pytest.mark.parametrize("form", ["text", "markdown", "html"])
def test_every_format_states_the_first_shown_odds_with_ci_and_what_they_are_net_of(store, form):
    cli, games = store
    model = json.loads(report(cli, "json"))["pairwise_model"]
    printed = html.unescape(report(cli, form))
    for odds in model["first_shown"] + [model["length"]]:
        assert (f"{odds['name']}: odds ratio {odds['odds_ratio']:.2f} (95% CI {odds['odds_ratio_ci_low']:.2f} to "
                f"{odds['odds_ratio_ci_high']:.2f})") in printed
    assert "net of the candidates' strengths" in printed
    assert "first-shown share is raw" in printed
