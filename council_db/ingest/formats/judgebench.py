"""JudgeBench's judge outputs: ``outputs/dataset=judgebench,response_model=<m>,judge_name=<n>,judge_model=<j>.jsonl``.

What ScalerLab/JudgeBench writes (run_judge.py, utils/judges.py), one line per response pair:
pair_id, original_id, source (the question's origin, e.g. "mmlu-pro-math"), question,
response_model, response_A, response_B, label (the objective verdict, "A>B" or "B>A"),
judge_name (the prompt or judge, e.g. "arena_hard") and judgments: the judge's verdict on the
pair as given (A shown first) and, unless run with --single_game, on the pair swapped (B shown
first, its letters naming the slots). Each judgment is null when the judge failed, else
{"judgment": {"judge_model": ..., ...}, "decision": "A>B" | "B>A" | "A=B" | null}.

What a line becomes: one session (``judgebench/<pair_id>``; ``--bench NAME`` replaces
"judgebench"), its category the line's ``source``, with two anonymous candidates,
``<session>/response_A`` and ``/response_B``, their lengths the responses' characters, on the
"0-1" scale (as fastchat-pair's games: a win 1, a tie 0.5, a loss 0):
- the judge, ``<judge_model>/<judge_name>`` (``--judge NAME`` names it), gives each judgment
  with a verdict: the first shows response_A in display slot 0, the swapped one response_B.
  Both orders in one session are the swap design. Verdicts are read on Arena-Hard's five
  levels, the strength dropped as JudgeBench's own metrics drop it (``decision.replace(">>",
  ">")``): A>>B and A>B are a win for the answer in slot A, A=B a tie, B>A and B>>A a loss. A
  null judgment or decision is no verdict: no record, counted in the summary;
- reviewer ``gold`` (kind gold) gives the label: 1 for the correct response, 0 for the other
  (a tie label 0.5 each), in no display slot.
The lines carry no time: the sessions are undated.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

import msgspec
import numpy as np

from council_db.contract.fields import LineError
from council_db.ingest.formats.judge_columns import record_columns
from council_db.ingest.formats.judge_lines import LineReader, Name, ParsedColumns, Values, lettered_verdict
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.sources import Source

SCALE = "0-1"
SLOTS = "1.2.0"  # the schema whose position is the display slot
GOLD = "gold"
BENCH = "judgebench"
# A verdict on Arena-Hard's five levels -> the score of the answer shown as A (B gets 1 minus it)
VERDICTS = {"A>>B": 1.0, "A>B": 1.0, "A=B": 0.5, "B>A": 0.0, "B>>A": 0.0}
RESPONSES = ("response_A", "response_B")
EXPECTED_VERDICT = '"A>B", "B>A" or "A=B" (or "A>>B", "B>>A"; null for none)'


class Judgment(msgspec.Struct):
    decision: Union[str, None] = None
    judgment: Union[dict[str, Any], None] = None  # the judge's model, prompt and text (only its model is read)


class Pair(msgspec.Struct):
    pair_id: Name
    response_A: str
    response_B: str
    label: str
    judge_name: Name
    judgments: Annotated[list[Union[Judgment, None]], msgspec.Meta(min_length=1, max_length=2)]
    source: Union[str, None] = None


def verdict(field: str, decision: str, expected: str = EXPECTED_VERDICT) -> float:
    """The score of the answer shown as A."""
    return lettered_verdict(field, decision, VERDICTS, expected)


class Reader(LineReader):
    FORMAT = "JudgeBench's judge output"
    line_type = Pair
    MADE_FROM = {"session_id": "<bench>/<pair_id>", "reviewer_id": "judgments (judge_model/judge_name) or --judge",
                 "model_id": "<session>/response_A or response_B"}
    EXPECTED = {
        "pair_id": "the pair's id (a non-empty string)",
        "response_A": "the first response, a string",
        "response_B": "the second response, a string",
        "label": '"A>B" or "B>A", the correct response',
        "judge_name": 'the judge\'s name, e.g. "arena_hard"',
        "judgments": "a list of one or two judgments (the pair as given, then swapped), each an object or null",
        "source": "the question's origin, a string",
    }

    def __init__(self, options: FormatOptions, source: Source):
        super().__init__()
        self.judge = options.judge
        self.bench = options.bench or BENCH

    def records(self, line: Pair) -> tuple[list[Values], int]:
        session = f"{self.bench}/{line.pair_id}"
        candidates = {name: f"{session}/{name}" for name in ("response_A", "response_B")}
        lengths = {"response_A": len(line.response_A), "response_B": len(line.response_B)}
        category = None if line.source is None else {"category": line.source[:100]}
        shared = dict(schema_version=SLOTS, session_id=session, timestamp="", score_scale=SCALE,
                      query_metadata=category)
        gold = verdict("label", line.label, '"A>B" or "B>A", the correct response first')
        records = [dict(**shared, reviewer_id=GOLD, reviewer_kind=GOLD, model_id=candidates[name], position=None,
                          response_length_chars=lengths[name], score_value=score)
                   for name, score in (("response_A", gold), ("response_B", 1.0 - gold))]
        silent = 0
        for number, (judgment, shown) in enumerate(zip(line.judgments, (("response_A", "response_B"),
                                                                        ("response_B", "response_A")))):
            if judgment is None or judgment.decision is None:
                silent += 1
                continue
            first = verdict(f"judgments[{number}].decision", judgment.decision)
            judge = self.judge_of(line, judgment)
            records += [dict(**shared, reviewer_id=judge, model_id=candidates[name], position=slot,
                               response_length_chars=lengths[name], score_value=score)
                        for slot, (name, score) in enumerate(zip(shown, (first, 1.0 - first)))]
        return records, silent

    def columns(self, numbers: list[int], lines: list[Pair]) -> ParsedColumns | None:
        """``records`` of every line at once: the label's two records in no slot, then each
        judgment's two in slots 0 and 1; None where a line would be refused (the record path
        says why)."""
        at, judges, shown_a, slot_b, first, silent = [], [], [], [], [], 0
        try:
            for index, line in enumerate(lines):
                at += (index, index)
                judges += ((GOLD, None),) * 2
                shown_a.append(True)
                slot_b.append(-1)
                first.append(VERDICTS[line.label])
                for number, judgment in enumerate(line.judgments):
                    if judgment is None or judgment.decision is None:
                        silent += 1
                        continue
                    at += (index, index)
                    judges += ((self.judge_of(line, judgment), None),) * 2
                    shown_a.append(number == 0)
                    slot_b.append(0)
                    first.append(VERDICTS[judgment.decision])
        except (KeyError, LineError):  # a verdict that is none, a judgment naming no judge
            return None
        return self._columns(numbers, lines, at, judges, shown_a, slot_b, first, silent)

    def _columns(self, numbers: list[int], lines: list[Pair], at: list[int], judges: list, shown_a: list[bool],
                 slot_b: list[int], first: list[float], silent: int) -> ParsedColumns | None:
        """The columns of the records ``columns`` found: per pair of records, its line, whether
        response_A is shown first, the slots (-1: none, the label's) and the first one's score."""
        a_first, slots, scores = np.repeat(shown_a, 2), np.repeat(slot_b, 2), np.array(first, dtype=np.float64)
        sessions = [f"{self.bench}/{line.pair_id}" for line in lines]
        names = np.where(a_first, np.tile([0, 1], len(first)), np.tile([1, 0], len(first)))  # 0: response_A
        lengths = np.array([[len(line.response_A), len(line.response_B)] for line in lines], dtype=np.int32)
        line_at = np.array(at)
        categories = [None if line.source is None else line.source[:100] for line in lines]
        columns = record_columns(
            np.array(numbers)[line_at], [sessions[index] for index in at],
            judges, [f"{sessions[index]}/{RESPONSES[name]}" for index, name in zip(at, names.tolist())],
            np.maximum(slots + np.tile([0, 1], len(first)), 0).astype(np.int32), lengths[line_at, names],
            np.column_stack([scores, 1.0 - scores]).ravel(), SLOTS, SCALE,
            categories=[categories[index] for index in at])
        if columns is None:
            return None
        columns.position_given, columns.reviewer_kinds = slots >= 0, {GOLD: GOLD}
        return ParsedColumns(columns=columns, no_verdict=silent)

    def judge_of(self, line: Pair, judgment: Judgment) -> str:
        """--judge, else the judgment's judge_model and the line's judge_name."""
        if self.judge:
            return self.judge
        model = (judgment.judgment or {}).get("judge_model")
        if not isinstance(model, str) or not model:
            raise LineError("judgments", "a judgment names no judge_model (a string in its \"judgment\"); give "
                                         "--judge NAME")
        return f"{model}/{line.judge_name}"
