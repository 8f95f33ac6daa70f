"""FastChat llm_judge pairwise judgments: ``model_judgment/<judge>_pair.jsonl``.

What llm_judge writes (fastchat/llm_judge/common.py, ``play_a_match_pair``), one line per
pair of answers: question_id, model_1, model_2, g1_winner and g2_winner, judge ([judge
model, prompt name]), g1_user_prompt, g1_judgment, g2_user_prompt, g2_judgment, turn, tstamp.
The judge sees the pair twice: game 1 shows model_1's answer as Assistant A (first), game 2
shows model_2's first. Each winner is "model_1", "model_2", "tie" or "error" (no verdict
could be read), already mapped from the game's A/B to the models.

What a line becomes: one session (``q81/t1/<judge>/<model_1>/<model_2>/<tstamp>``, after
``--bench NAME/`` when given) of up to four records on the "0-1" scale: win 1, tie 0.5,
loss 0, with the display slot each answer had (game 1: model_1 at slot 0, model_2 at 1;
game 2: model_2 at 0, model_1 at 1). The same pair in both orders in one session is the
swap design: the report reads position consistency off it. A game whose winner is "error"
gives no record (the summary counts it); the other game is kept. Timestamp: tstamp; lengths
from ``--answers DIR`` when the answer's text is in the prompt of game 1, else unknown.
The reviewer is the judge model with the prompt name (judge[1], e.g. "pair-v2") as its reviewer_prompt.
"""

from __future__ import annotations

from operator import attrgetter

import msgspec
import numpy as np

from council_db.contract.fields import LineError
from council_db.contract.score_batch import coded
from council_db.ingest.formats.answers import metadata
from council_db.ingest.formats.judge_columns import length_column, record_columns, unix_us_column
from council_db.ingest.formats.judge_lines import (
    Judge,
    Name,
    ParsedColumns,
    QuestionId,
    Turn,
    Values,
    judge_model,
    judge_prompt,
    unix_us,
)
from council_db.ingest.formats.llm_judge import LlmJudgeReader, bench_prefix

SCALE = "0-1"
SLOTS = "1.2.0"  # the schema whose position is the display slot
# A game's winner -> (model_1's score, model_2's score); "error" is no verdict
SCORES = {"model_1": (1.0, 0.0), "model_2": (0.0, 1.0), "tie": (0.5, 0.5)}
NO_VERDICT = "error"
_TSTAMP, _JUDGE, _WINNERS = attrgetter("tstamp"), attrgetter("judge"), attrgetter("g1_winner", "g2_winner")


class Judgment(msgspec.Struct):
    question_id: QuestionId
    model_1: Name
    model_2: Name
    g1_winner: str
    g2_winner: str
    judge: Judge
    turn: Turn
    tstamp: float


class JudgmentWithPrompt(Judgment):
    g1_user_prompt: str


def session_key(bench: str | None, line: Judgment, judge: str) -> str:
    """One judgment line: a pair judged again later is another session."""
    return (f"{bench_prefix(bench)}q{line.question_id}/t{line.turn}/{judge}/{line.model_1}/{line.model_2}/"
            f"{line.tstamp!r}")


def verdict(field: str, winner: str) -> tuple[float, float] | None:
    """(model_1's, model_2's) score of one game, None for no verdict."""
    if winner == NO_VERDICT:
        return None
    if winner not in SCORES:
        raise LineError(field, f"a string of {len(winner):,} characters that is no winner; expected \"model_1\", "
                               "\"model_2\", \"tie\" or \"error\" as llm_judge writes them")
    return SCORES[winner]


class Reader(LlmJudgeReader):
    FORMAT = "FastChat's llm_judge (pairwise)"
    EXPECTED = {
        "question_id": "the question's id (a number or a string)",
        "model_1": "the first model's name (a non-empty string)",
        "model_2": "the second model's name (a non-empty string)",
        "g1_winner": '"model_1", "model_2", "tie" or "error"',
        "g2_winner": '"model_1", "model_2", "tie" or "error"',
        "judge": 'the judge as ["gpt-4", "pair-v2"] (judge model, prompt name)',
        "turn": "1 or 2, the turn judged",
        "tstamp": "the Unix time the judgment was written, a number",
        "g1_user_prompt": "the prompt of game 1, a string",
    }
    MADE_FROM = {"session_id": "q<question_id>/t<turn>/<judge>/<model_1>/<model_2>/<tstamp>", "reviewer_id": "judge",
                 "reviewer_prompt": "judge", "model_id": "model_1 or model_2", "timestamp": "tstamp"}

    plain, prompted = Judgment, JudgmentWithPrompt

    def records(self, line: Judgment) -> tuple[list[Values], int]:
        first, second = line.model_1, line.model_2
        if first == second:
            raise LineError("model_2", "is model_1 again; expected two different models (a pair)")
        games = [verdict("g1_winner", line.g1_winner), verdict("g2_winner", line.g2_winner)]
        judge = judge_model(line.judge)
        shared = dict(schema_version=SLOTS, session_id=session_key(self.bench, line, judge),
                      timestamp=unix_us("tstamp", line.tstamp), reviewer_id=judge,
                      reviewer_prompt=judge_prompt(line.judge), score_scale=SCALE,
                      query_metadata=metadata(self.categories, line.question_id))
        lengths = {first: self.length(line, first), second: self.length(line, second)}
        shown = [((first, second), games[0]), ((second, first), games[1] and games[1][::-1])]
        records = [dict(shared, model_id=model, position=slot, response_length_chars=lengths[model],
                        score_value=score)
                   for order, scores in shown if scores is not None
                   for slot, (model, score) in enumerate(zip(order, scores))]
        return records, games.count(None)

    def columns(self, numbers: list[int], lines: list[Judgment]) -> ParsedColumns | None:
        """``records`` of every line at once: each game's two records as a line's slots, the
        values read once a line (a judge once per distinct one)."""
        tstamps = np.fromiter(map(_TSTAMP, lines), dtype=np.float64, count=len(lines))
        times = unix_us_column(tstamps)
        games = [(SCORES.get(first, first), SCORES.get(second, second)) for first, second in map(_WINNERS, lines)]
        if times is None or any(not isinstance(game, tuple) and game != NO_VERDICT for pair in games for game in pair):
            return None  # a winner that is no winner, or a time no date holds: the record path says which line
        given, judge = coded(list(map(_JUDGE, lines)))
        judges = [(judge_model(found), judge_prompt(found)) for found in given]
        line_judges = [judges[code] for code in judge.tolist()]
        at, models, scores = [], [], []
        for index, (line, (first, second)) in enumerate(zip(lines, games)):
            if line.model_1 == line.model_2:
                return None
            if first != NO_VERDICT:
                at += (index, index)
                models += (line.model_1, line.model_2)
                scores += first
            if second != NO_VERDICT:
                at += (index, index)
                models += (line.model_2, line.model_1)
                scores += second[::-1]
        if not at:
            return None
        keys = [session_key(self.bench, line, model) for line, (model, _) in zip(lines, line_judges)]
        made = [lines[index] for index in at]
        columns = record_columns(
            np.array(numbers)[at], [keys[index] for index in at], [line_judges[index] for index in at], models,
            np.tile(np.array([0, 1], dtype=np.int32), len(at) // 2),
            length_column(map(self.length, made, models) if self.texts else None, len(models)),
            np.array(scores, dtype=np.float64), SLOTS, SCALE, times[at],
            [self.categories.get(str(line.question_id)) for line in made] if self.categories else None)
        silent = sum(game == NO_VERDICT for pair in games for game in pair)
        return None if columns is None else ParsedColumns(columns=columns, no_verdict=silent)

    def length(self, line: Judgment, model: str) -> int | None:
        """The answer's characters, when --answers holds the text the judge saw in game 1."""
        prompt = line.g1_user_prompt if isinstance(line, JudgmentWithPrompt) else None
        return self.seen_length(model, line.question_id, line.turn, prompt)
