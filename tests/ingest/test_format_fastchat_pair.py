"""council-db import --from fastchat-pair on a fixture written from llm_judge's documented
pairwise format (tests/data/fastchat-pair: its README says what its lines hold). Expected
figures come from the fixture's lines with plain Python, by llm_judge's own reading of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import realdata
from tests.conftest import Cli, both_backends, scalar, write_jsonl

BENCH = Path(__file__).parents[1] / "data" / "fastchat-pair" / "mt_bench"
JUDGMENTS = BENCH / "model_judgment" / "gpt-4_pair.jsonl"
ANSWERS = BENCH / "model_answer"
WON = {"model_1": (1.0, 0.0), "model_2": (0.0, 1.0), "tie": (0.5, 0.5)}


def judgments() -> list[dict]:
    return list(realdata.read_jsonl(JUDGMENTS))


def expected_records() -> list[tuple]:
    """(line, model, slot, score) for every game with a verdict: game 1 shows model_1 first."""
    rows = []
    for number, j in enumerate(judgments(), start=1):
        for order, winner in (((j["model_1"], j["model_2"]), j["g1_winner"]),
                              ((j["model_2"], j["model_1"]), j["g2_winner"])):
            if winner != "error":
                first_won = WON[winner] if order[0] == j["model_1"] else WON[winner][::-1]
                rows += [(number, model, slot, first_won[slot]) for slot, model in enumerate(order)]
    return rows


def swap_outcomes() -> dict[str, int]:
    """Both games decided: the same model preferred (or tied) in both is consistent; the
    model shown first winning both is primacy, shown second recency."""
    found = {"consistent": 0, "primacy": 0, "recency": 0, "one_tie": 0}
    for j in judgments():
        g1, g2 = j["g1_winner"], j["g2_winner"]
        if "error" in (g1, g2):
            continue
        if g1 == g2:
            found["consistent"] += 1
        elif "tie" in (g1, g2):
            found["one_tie"] += 1
        else:
            found["primacy" if (g1, g2) == ("model_1", "model_2") else "recency"] += 1
    return found


def imported(cli: Cli, *paths: Path) -> dict:
    result = cli("import", "--from", "fastchat-pair", *map(str, paths), "--answers", str(ANSWERS), "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@both_backends
def test_each_game_with_a_verdict_gives_its_two_answers_a_0_1_score_at_their_display_slots(cli, db):
    summary = imported(cli, JUDGMENTS)
    expected = expected_records()
    errors = sum((j["g1_winner"] == "error") + (j["g2_winner"] == "error") for j in judgments())
    assert (summary["inserted"], summary["no_verdict"], summary["rejected"]) == (len(expected), errors, 0) == (54, 3, 0)
    assert scalar(db, "SELECT COUNT(*) FROM sessions") == sum(
        {j["g1_winner"], j["g2_winner"]} != {"error"} for j in judgments())
    rows = json.loads(Cli(cli.db)("sql", "SELECT m.name AS model, s.position AS slot, s.score_value AS score "
                                         "FROM scores s JOIN models m ON m.id = s.model_id", "--format", "json").stdout)
    assert sorted((r["model"], r["slot"], r["score"]) for r in rows) == sorted(e[1:] for e in expected)
    assert scalar(db, "SELECT COUNT(*) FROM scores WHERE NOT display_order") == 0


def test_the_report_reads_position_consistency_off_the_pairs_judged_in_both_orders(tmp_path):
    cli = Cli(tmp_path / "council.db")
    imported(cli, JUDGMENTS)
    swaps = json.loads(cli("bias-report", "--format", "json").stdout)["position"]["swaps"]
    found = swap_outcomes()
    pairs = sum(found.values())
    assert (swaps["swaps"], swaps["primacy"], swaps["recency"], swaps["one_tie"]) == (
        pairs, found["primacy"], found["recency"], found["one_tie"]) == (13, 3, 2, 1)
    assert swaps["consistent"]["estimate"] == pytest.approx(found["consistent"] / pairs)
    flipped = found["primacy"] + found["recency"]
    assert swaps["first_preferred"]["estimate"] == pytest.approx(found["primacy"] / flipped)


def test_a_length_is_known_only_where_the_judge_saw_the_answer_of_the_answer_files(tmp_path):
    """The last line judges vicuna's answer of before it was generated again: unknown."""
    cli = Cli(tmp_path / "council.db")
    summary = imported(cli, JUDGMENTS)
    texts = {(path.stem, line["question_id"]): line["choices"][0]["turns"]
             for path in ANSWERS.glob("*.jsonl") for line in realdata.read_jsonl(path)}
    lines = judgments()

    def length(number: int, model: str) -> int:
        j = lines[number - 1]
        text = texts[(model, j["question_id"])][j["turn"] - 1]
        return len(text) if text in j["g1_user_prompt"] else -1

    expected = sorted((model, length(number, model)) for number, model, _, _ in expected_records())
    assert [pair for pair in expected if pair[1] == -1] == [("vicuna-13b-v1.3", -1)] * 2  # line 15, both games
    assert summary["unknown_length"] == 2
    rows = json.loads(cli("sql", "SELECT m.name AS model, s.response_length_chars AS n FROM scores s JOIN models m "
                                 "ON m.id = s.model_id", "--format", "json").stdout)
    assert sorted((r["model"], r["n"]) for r in rows) == expected


def test_importing_again_stores_nothing_new(tmp_path):
    cli = Cli(tmp_path / "council.db")
    imported(cli, JUDGMENTS)
    copy = tmp_path / "gpt-4_pair.jsonl"
    copy.write_bytes(JUDGMENTS.read_bytes())
    again = imported(cli, copy)
    assert (again["inserted"], again["duplicates"], again["no_verdict"]) == (0, 54, 3)


def test_a_winner_llm_judge_never_writes_or_a_pair_of_one_model_is_rejected(tmp_path):
    first = judgments()[0]
    lines = [first, {**first, "g2_winner": "A"}, {**first, "model_2": first["model_1"]}, {**first, "turn": 0}]
    cli = Cli(tmp_path / "council.db")
    result = cli("import", "--from", "fastchat-pair", str(write_jsonl(tmp_path / "in.jsonl", lines)))
    assert result.exit_code == 3
    assert 'line 2: g2_winner: a string of 1 characters that is no winner; expected "model_1"' in result.stderr
    assert "line 3: model_2: is model_1 again; expected two different models (a pair)" in result.stderr
    assert "line 4: turn: not `int` >= 1; expected 1 or 2, the turn judged" in result.stderr
