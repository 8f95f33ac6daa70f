"""council-db import --from judgebench on a fixture written from JudgeBench's documented output
format (tests/data/judgebench: its README says what each line holds). Expected figures come
from the lines with plain Python, by JudgeBench's own reading of them (utils/metrics.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from tests.conftest import Cli, both_backends, write_jsonl

OUTPUTS = Path(__file__).parents[1] / "data" / "judgebench" / "outputs"
ARENA = next(OUTPUTS.glob("*judge_name=arena_hard*.jsonl"))
REWARD = next(OUTPUTS.glob("*judge_name=reward_model*.jsonl"))
JUDGE = "gpt-4o-mini/arena_hard"
FLIP = {"A>B": "B>A", "B>A": "A>B"}


def lines(path: Path = ARENA) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def decisions(line: dict) -> list[str | None]:
    """Each judgment's decision in the pair's own letters (JudgeBench's flip_judgment on the
    swapped one), with Arena-Hard's strong verdicts read as the plain ones."""
    found = [None if j is None or j["decision"] is None else j["decision"].replace(">>", ">")
             for j in line["judgments"]]
    return found[:1] + [FLIP.get(d, d) for d in found[1:]]


def judgebench_figures(pairs: list[dict]) -> dict[str, int]:
    """JudgeBench's compute_final_metrics (reverse order): net correct over both orders, and
    both orders correct; and accuracy per order."""
    counts = dict.fromkeys(("net_correct", "net_incorrect", "net_tie", "both_correct", "first", "second"), 0)
    for line in pairs:
        label, found = line["label"], decisions(line) + [None]
        net = sum((d == label) - (d == FLIP[label]) for d in found[:2])
        counts["net_correct" if net > 0 else "net_incorrect" if net < 0 else "net_tie"] += 1
        counts["both_correct"] += found[0] == label and found[1] == label
        counts["first"] += found[0] == label
        counts["second"] += found[1] == label
    return counts


def imported(db, *paths: Path, **options):
    return import_files(db, [str(path) for path in paths], options=FormatOptions("judgebench", **options))


def stored(db) -> dict[str, dict[str, list]]:
    """judge -> session -> [verdict as given, verdict swapped] in the pair's letters ("A>B",
    "B>A", "A=B", None), read from the records: the order is which response sits in slot 0;
    and gold -> session -> [label]."""
    with db.reading() as reader:
        rows = reader.rows("SELECT session_id, reviewer, model, position, position_is_display_order, score_value "
                           "FROM score_records")
    found: dict[str, dict[str, dict]] = {}
    for session, reviewer, model, position, displayed, score in rows:
        response = model.rsplit("_", 1)[1]
        orders = found.setdefault(reviewer, {}).setdefault(session, {})
        key = "gold" if not displayed else ("as given" if (response, position) in (("A", 0), ("B", 1)) else "swapped")
        orders.setdefault(key, {})[response] = score
    named = {}
    for reviewer, sessions in found.items():
        for session, orders in sessions.items():
            named.setdefault(reviewer, {})[session] = [_verdict(orders.get(key)) for key in (
                ("gold",) if reviewer == "gold" else ("as given", "swapped"))]
    return named


def _verdict(scores: dict | None) -> str | None:
    if scores is None:
        return None
    return "A>B" if scores["A"] > scores["B"] else "B>A" if scores["B"] > scores["A"] else "A=B"


@both_backends
def test_every_judgment_with_a_verdict_is_stored_in_its_order_and_the_label_as_gold(db):
    summary = imported(db, ARENA)
    pairs = lines()
    verdicts = stored(db)
    sessions = {f"judgebench/{line['pair_id']}": line for line in pairs}

    assert set(verdicts) == {"gold", JUDGE}
    assert {session: found[0] for session, found in verdicts["gold"].items()} == {
        session: line["label"] for session, line in sessions.items()}
    assert verdicts[JUDGE] == {session: (decisions(line) + [None])[:2] for session, line in sessions.items()
                               if any(decisions(line))}
    no_verdict = sum(d is None for line in pairs for d in decisions(line))
    assert (summary.files[0].no_verdict, summary.files[0].rejected) == (no_verdict, 0) == (4, 0)


def test_the_stored_verdicts_give_judgebenchs_own_figures(db):
    imported(db, ARENA)
    verdicts = stored(db)
    as_lines = [{"label": verdicts["gold"][session][0], "judgments": [
        None if d is None else {"decision": d} for d in (found[0], FLIP.get(found[1], found[1]))]}
        for session, found in ((s, verdicts[JUDGE].get(s, [None, None])) for s in verdicts["gold"])]

    assert judgebench_figures(as_lines) == judgebench_figures(lines()) == {
        "net_correct": 6, "net_incorrect": 2, "net_tie": 4, "both_correct": 3, "first": 6, "second": 5}


def test_a_pair_is_one_session_with_two_anonymous_candidates_its_source_the_category(db):
    imported(db, ARENA)
    first = lines()[0]
    session = f"judgebench/{first['pair_id']}"
    with db.reading() as reader:
        rows = reader.rows("SELECT model, position, response_length_chars, score_value, category FROM score_records "
                           "WHERE session_id = :s AND reviewer = :j ORDER BY position, model",
                           {"s": session, "j": JUDGE})

    assert [tuple(row) for row in rows] == [
        (f"{session}/response_A", 0, len(first["response_A"]), 1.0, first["source"]),
        (f"{session}/response_B", 0, len(first["response_B"]), 0.0, first["source"]),
        (f"{session}/response_A", 1, len(first["response_A"]), 1.0, first["source"]),
        (f"{session}/response_B", 1, len(first["response_B"]), 0.0, first["source"])]


def test_a_reward_model_run_on_the_same_pairs_meets_them_in_the_same_sessions(db):
    imported(db, ARENA)
    summary = imported(db, REWARD)
    verdicts = stored(db)

    reward = "Skywork/Skywork-Reward-Llama-3.1-8B/reward_model"
    assert set(verdicts[reward]) <= set(verdicts["gold"]) and len(verdicts[reward]) == 3
    assert summary.files[0].duplicates == 6, "the gold labels are stored already"
    with db.reading() as reader:
        kinds = dict(reader.rows("SELECT name, reviewer_kind FROM models WHERE name IN ('gold', :r)", {"r": reward}))
    assert kinds == {"gold": "gold", reward: "judge"}


def test_judge_and_bench_name_the_judge_and_the_sessions(db):
    imported(db, ARENA, judge="my-judge", bench="jb-gpt")

    verdicts = stored(db)
    assert set(verdicts) == {"gold", "my-judge"}
    assert {session.split("/")[0] for session in verdicts["gold"]} == {"jb-gpt"}


def test_a_line_that_does_not_fit_is_rejected_naming_its_field_and_the_others_are_kept(db, tmp_path):
    good = lines()[0]
    bad = [
        {**good, "judgments": [{**good["judgments"][0], "decision": "A<B"}]},
        {**good, "label": "A"},
        {key: value for key, value in good.items() if key != "response_B"},
        {**good, "judgments": []},
        {**good, "judgments": [{"decision": "A>B", "judgment": {"scores": [1, 2]}}]},
        "not json",
    ]
    path = write_jsonl(tmp_path / "out.jsonl", [good, *bad])

    summary = imported(db, path)

    reasons = {r.line_number: r.reason for r in summary.files[0].rejected_lines}
    assert reasons == {
        2: 'judgments[0].decision: a string of 3 characters that is no verdict; expected "A>B", "B>A" or "A=B" '
           '(or "A>>B", "B>>A"; null for none)',
        3: 'label: a string of 1 characters that is no verdict; expected "A>B" or "B>A", the correct response first',
        4: "response_B: missing; expected the second response, a string",
        5: "judgments: not `array` of length >= 1; expected a list of one or two judgments (the pair as given, "
           "then swapped), each an object or null",
        6: 'judgments: a judgment names no judge_model (a string in its "judgment"); give --judge NAME',
        7: reasons[7],
    }
    assert reasons[7].startswith("not valid JSON")
    assert summary.files[0].inserted == 6, "the good line: the gold label and both orders"


@pytest.mark.parametrize("option", ["--judge", "--bench"])
def test_the_cli_takes_judgebenchs_options(tmp_path, option):
    cli = Cli(tmp_path / "council.db")
    result = cli("import", "--from", "judgebench", option, "x", str(ARENA), "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["files"][0]["format"] == "judgebench"
