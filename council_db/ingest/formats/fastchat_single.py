"""FastChat llm_judge single-answer grading: ``model_judgment/<judge>_single.jsonl``.

What llm_judge writes (fastchat/llm_judge/common.py, ``play_a_match_single``), one line per
grading: question_id, model, judge ([judge model, prompt name]), user_prompt (the prompt with
the question and the answer), judgment (the judge's text), score (1-10 as the judge wrote it,
-1 when no rating could be read from the judgment), turn (1, or 2 for the multi-turn prompt),
tstamp (Unix seconds when the grading was written).

What a line becomes: one record.
- session: one per question and turn (``q81/t1``, after ``--bench NAME/`` when given): every
  grading of that turn's answers, whoever wrote or graded them, is compared within it.
- reviewer: the judge model, with the prompt name (judge[1], e.g. "single-v1") as its
  reviewer_prompt: two prompts of one model are two reviewers; candidate: ``model``; scale
  "1-10"; timestamp: tstamp.
- score -1 (no rating): stored as 0.0, llm-council's "never scored", kept and excluded.
- position: not a display slot (the judge sees one answer; schema 1.0.0), but a key that
  tells two gradings of one model's answer apart: a 31-bit digest of tstamp. Files hold such
  repeats (the ORPO file grades one model twice, three days apart, the second time after its
  answers were generated again); a digest of the line itself keeps every grading, importing
  the same line twice stores it once, and any process can compute it from the line alone.
- length: the answer's characters from ``--answers DIR`` (model_answer/<model>.jsonl), only
  when that text is in the prompt the judge saw; otherwise unknown (null): an answer file
  generated again after the grading holds another answer than the one graded.
"""

from __future__ import annotations

import hashlib
import struct
from operator import attrgetter

import msgspec
import numpy as np

from council_db.contract.record_columns import RecordColumns
from council_db.contract.score_batch import coded
from council_db.ingest.formats.answers import metadata
from council_db.ingest.formats.judge_columns import (
    length_column,
    recoded,
    storable_names,
    unix_us_column,
    within_score_bounds,
)
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

NO_RATING = -1.0  # llm_judge's score when the judgment held no [[rating]]
UNSCORED = 0.0  # llm-council's "never scored", which every analysis leaves out
SCALE = "1-10"
NOT_A_SLOT = "1.0.0"  # the schema whose position is no display slot
_TSTAMP, _SCORE, _QUESTION, _TURN, _JUDGE, _MODEL = map(attrgetter, ("tstamp", "score", "question_id", "turn", "judge",
                                                                     "model"))


class Grading(msgspec.Struct):
    question_id: QuestionId
    model: Name
    judge: Judge
    score: float
    turn: Turn
    tstamp: float


class GradingWithPrompt(Grading):
    user_prompt: str


def call_key(tstamp: float) -> int:
    """A 31-bit digest of the grading's time: the position that keeps repeated gradings apart."""
    return int.from_bytes(hashlib.blake2b(struct.pack("<d", tstamp), digest_size=4).digest(), "little") & 0x7FFF_FFFF


def call_keys(tstamps: np.ndarray) -> np.ndarray:
    """``call_key`` of each time: the digests of their bytes read as one array."""
    raw = tstamps.astype("<f8").tobytes()
    digests = b"".join([hashlib.blake2b(raw[at:at + 8], digest_size=4).digest() for at in range(0, len(raw), 8)])
    return (np.frombuffer(digests, dtype="<u4") & 0x7FFF_FFFF).astype(np.int32)


def session_key(bench: str | None, question: int | str, turn: int) -> str:
    return f"{bench_prefix(bench)}q{question}/t{turn}"


class Reader(LlmJudgeReader):
    FORMAT = "FastChat's llm_judge (single)"
    EXPECTED = {
        "question_id": "the question's id (a number or a string)",
        "model": "the graded model's name (a non-empty string)",
        "judge": 'the judge as ["gpt-4", "single-v1"] (judge model, prompt name)',
        "score": "the rating, a number (-1 when the judge gave none)",
        "turn": "1 or 2, the turn graded",
        "tstamp": "the Unix time the grading was written, a number",
        "user_prompt": "the prompt the judge saw, a string",
    }
    MADE_FROM = {"session_id": "q<question_id>/t<turn>", "reviewer_id": "judge", "reviewer_prompt": "judge",
                 "model_id": "model",
                 "score_value": "score", "timestamp": "tstamp", "position": "tstamp"}

    plain, prompted = Grading, GradingWithPrompt

    def records(self, line: Grading) -> tuple[list[Values], int]:
        return [dict(
            schema_version=NOT_A_SLOT, session_id=session_key(self.bench, line.question_id, line.turn),
            timestamp=unix_us("tstamp", line.tstamp), reviewer_id=judge_model(line.judge),
            reviewer_prompt=judge_prompt(line.judge), model_id=line.model,
            position=call_key(line.tstamp), response_length_chars=self.length(line),
            score_value=UNSCORED if line.score == NO_RATING else line.score, score_scale=SCALE,
            query_metadata=metadata(self.categories, line.question_id),
        )], 0

    def columns(self, numbers: list[int], lines: list[Grading]) -> ParsedColumns | None:
        """``records`` of every line at once: a line's struct is read once per field, and a session
        key, judge and category made once per distinct value."""
        count = len(lines)
        tstamps = np.fromiter(map(_TSTAMP, lines), dtype=np.float64, count=count)
        times = unix_us_column(tstamps)
        scores = np.fromiter(map(_SCORE, lines), dtype=np.float64, count=count)
        scores[scores == NO_RATING] = UNSCORED
        asked, turn_asked = coded(list(zip(map(_QUESTION, lines), map(_TURN, lines))))
        keys, session = recoded([session_key(self.bench, question, turn) for question, turn in asked], turn_asked)
        given, judge = coded(list(map(_JUDGE, lines)))
        judges, judge = recoded([(judge_model(found), judge_prompt(found)) for found in given], judge)
        models, model = coded(list(map(_MODEL, lines)))
        if (times is None or not within_score_bounds(scores)
                or not storable_names(keys + [name for found in judges for name in found if name] + models)):
            return None
        categories, category = self._categories([question for question, _ in asked], turn_asked)
        return ParsedColumns(columns=RecordColumns(
            np.array(numbers), keys, session, judges, judge, models, model, call_keys(tstamps),
            length_column(map(self.length, lines) if self.texts else None, count),
            scores, NOT_A_SLOT, SCALE, times, categories, category))

    def _categories(self, questions: list, asked: np.ndarray) -> tuple[list | None, np.ndarray | None]:
        """The distinct categories (--answers' question.jsonl) and each record's; None without any."""
        if not self.categories:
            return None, None
        return recoded([self.categories.get(str(question)) for question in questions], asked)

    def length(self, line: Grading) -> int | None:
        """The graded answer's characters, when --answers holds the text the judge saw."""
        prompt = line.user_prompt if isinstance(line, GradingWithPrompt) else None
        return self.seen_length(line.model, line.question_id, line.turn, prompt)
