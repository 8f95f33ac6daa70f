"""FastChat's Vicuna-80 review tables: ``review/<run>/*.jsonl`` (fastchat/eval, 2023).

What fastchat/eval/eval_gpt_review.py writes, one line per judge call: review_id (a random
id), question_id, answer1_id and answer2_id (the two answers, Assistant 1 shown first),
reviewer_id (the prompt used, not the judge), metadata, text (the review), score ([Assistant
1's, Assistant 2's], 1-10; [-1, -1] when no score pair could be read). The lines name no
judge and carry no time.

What a line becomes: one session (``review/<review_id>``) of two records on the "1-10"
scale, Assistant 1 at display slot 0 and Assistant 2 at slot 1 (one answer may be shown in
both: FastChat's GPT-3.5 run compares a model with itself). The candidates and their
lengths come from the answer files (``--answers DIR``, answer/answer_*.jsonl), which are
therefore required. The reviewer is ``--judge NAME``, else the file name's prefix before
``_review_`` (FastChat names its GPT-3.5 tables so), else "gpt-4", the model
eval_gpt_review.py calls. A score of -1 is stored as 0.0 (never scored: kept, excluded).
The timestamp is empty: the sessions are undated, and the report says so.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Annotated, Union

import msgspec
import numpy as np

from council_db.contract.fields import LineError
from council_db.ingest.formats.answers import Answer, answers_by_id, categories, metadata
from council_db.ingest.formats.judge_columns import length_column, record_columns
from council_db.ingest.formats.judge_lines import LineReader, Name, ParsedColumns, QuestionId, Values
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.sources import Source

SCALE = "1-10"
SLOTS = "1.2.0"
NO_RATING = -1.0
DEFAULT_JUDGE = "gpt-4"  # eval_gpt_review.py's model


class Review(msgspec.Struct):
    review_id: Name
    question_id: QuestionId
    answer1_id: Name
    answer2_id: Name
    score: Annotated[list[float], msgspec.Meta(min_length=2, max_length=2)]
    reviewer_id: Union[int, str, None] = None


def judge_of(options: FormatOptions, source: Source) -> str:
    """--judge, else the file name's prefix before "_review_", else eval_gpt_review.py's model."""
    if options.judge:
        return options.judge
    prefix, found, _ = PurePath(source.name).name.partition("_review_")
    return prefix if found and prefix else DEFAULT_JUDGE


class Reader(LineReader):
    FORMAT = "FastChat's review table"
    line_type = Review
    EXPECTED = {
        "review_id": "the review's id (a non-empty string)",
        "question_id": "the question's id (a number or a string)",
        "answer1_id": "the id of the answer shown first, as in the answer files",
        "answer2_id": "the id of the answer shown second, as in the answer files",
        "score": "[Assistant 1's score, Assistant 2's score], two numbers",
    }
    MADE_FROM = {"session_id": "review/<review_id>", "score_value": "score",
                 "model_id": "the model_id of answer1_id's or answer2_id's answer in the --answers folder"}

    def __init__(self, options: FormatOptions, source: Source):
        super().__init__()
        assert options.answers is not None, "FormatOptions.check requires --answers for review tables"
        self.answers = answers_by_id(options.answers)
        self.categories = categories(options.answers)
        self.judge = judge_of(options, source)

    def records(self, line: Review) -> tuple[list[Values], int]:
        shown = [self.answer("answer1_id", line.answer1_id), self.answer("answer2_id", line.answer2_id)]
        shared = dict(schema_version=SLOTS, session_id=f"review/{line.review_id}", timestamp="",
                      reviewer_id=self.judge, score_scale=SCALE, query_metadata=metadata(self.categories,
                                                                                          line.question_id))
        return [dict(shared, model_id=answer.model, position=slot, response_length_chars=answer.chars,
                     score_value=0.0 if score == NO_RATING else score)
                for slot, (answer, score) in enumerate(zip(shown, line.score))], 0

    def columns(self, numbers: list[int], lines: list[Review]) -> ParsedColumns | None:
        """``records`` of every line at once: its two answers in slots 0 and 1; None where a line
        names an answer the folder lacks (the record path says which)."""
        shown = [self.answers.get(answer_id) for line in lines for answer_id in (line.answer1_id, line.answer2_id)]
        if None in shown:
            return None
        scores = np.array([score for line in lines for score in line.score], dtype=np.float64)
        scores[scores == NO_RATING] = 0.0
        categories = None if not self.categories else [
            category for line in lines for category in (self.categories.get(str(line.question_id)),) * 2]
        columns = record_columns(
            np.repeat(np.array(numbers), 2), [key for line in lines for key in (f"review/{line.review_id}",) * 2],
            [(self.judge, None)] * len(shown), [answer.model for answer in shown],
            np.tile(np.array([0, 1], dtype=np.int32), len(lines)),
            length_column([answer.chars for answer in shown], len(shown)),
            scores, SLOTS, SCALE, categories=categories)
        return None if columns is None else ParsedColumns(columns=columns)

    def answer(self, field: str, answer_id: str) -> Answer:
        found = self.answers.get(answer_id)
        if found is None:
            raise LineError(field, "names no answer in the --answers folder: give the folder of the answer files "
                                   "this table was made from (answer/answer_*.jsonl)")
        return found
