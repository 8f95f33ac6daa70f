"""arena-hard-auto's judgments: ``data/<bench>/model_judgment/<judge>/<model>.jsonl``.

What lmarena/arena-hard-auto writes (gen_judgment.py), one line per question and judged model,
in two generations: v0.1 (question_id, model, judge, games) and v2 (uid, category, judge,
model, baseline, games). The judge compares the model's answer with a baseline's twice: game 1
shows the baseline as A (first), game 2 swaps them. Each game is null (the call failed) or
holds ``score``, the verdict the judge's text ends with: "A>>B", "A>B", "A=B", "B>A", "B>>A"
(or the mirrored spellings show_result.py also reads: "B<<A" is "A>>B", ...), or null when no
verdict could be read.

What a line becomes: one session, ``<bench>/<question>/<model>`` (bench: ``--bench``, else the
folder above model_judgment/, else "arena-hard"), undated, its category the line's (v2), with
two candidates, the model and the baseline (the line's (v2), else ``--baseline``, else the
format's default gpt-4-0314; a line naming another than ``--baseline`` is rejected), on the
"0-1" scale keeping the verdict's strength: the answer shown as A scores 1, 0.75, 0.5, 0.25 or
0 for A>>B, A>B, A=B, B>A, B>>A, the other one minus that. Game 1 puts the baseline in display
slot 0, game 2 the model: both orders in one session are the swap design. A null game or
verdict is no verdict: no record, counted. The judge is ``--judge``, else the line's, else the
folder the file is in. With ``--answers DIR`` (model_answer/), each answer's length in
characters and its style (formats/arena_answers.py).
"""

from __future__ import annotations

from typing import Annotated, Union

import msgspec
import numpy as np

from council_db.contract.fields import METADATA_VALUE_MAX_CHARS, UNKNOWN_LENGTH, LineError
from council_db.ingest.formats.arena_answers import AnswerStyle, answer_styles
from council_db.ingest.formats.judge_columns import record_columns
from council_db.ingest.formats.judge_lines import LineReader, Name, ParsedColumns, QuestionId, Values, lettered_verdict
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.sources import Source

SCALE = "0-1"
SLOTS = "1.2.0"  # the schema whose position is the display slot
BENCH = "arena-hard"
DEFAULT_BASELINE = "gpt-4-0314"  # arena-hard-v0.1's baseline (config/judge_config.yaml)
JUDGMENTS = "model_judgment"  # data/<bench>/model_judgment/<judge>/<model>.jsonl
# A verdict -> the score of the answer shown as A, its strength kept (B gets 1 minus it)
VERDICTS = {"A>>B": 1.0, "A>B": 0.75, "A=B": 0.5, "B>A": 0.25, "B>>A": 0.0,
            "B<<A": 1.0, "B<A": 0.75, "B=A": 0.5, "A<B": 0.25, "A<<B": 0.0}
EXPECTED_VERDICT = '"A>>B", "A>B", "A=B", "B>A" or "B>>A" (null for none)'


class Game(msgspec.Struct):
    score: Union[str, None] = None  # the judge's text and prompt are not read


class Judgment(msgspec.Struct):
    model: Name
    games: Annotated[list[Union[Game, None]], msgspec.Meta(min_length=1, max_length=2)]
    uid: Union[QuestionId, None] = None  # v2
    question_id: Union[QuestionId, None] = None  # v0.1
    judge: Union[Name, None] = None
    baseline: Union[Name, None] = None  # v2
    category: Union[str, None] = None  # v2


def verdict(field: str, score: str) -> float:
    """The score of the answer shown as A, its strength kept."""
    return lettered_verdict(field, score, VERDICTS, EXPECTED_VERDICT)


class Reader(LineReader):
    FORMAT = "arena-hard-auto's judgment"
    line_type = Judgment
    MADE_FROM = {"session_id": "<bench>/<uid or question_id>/<model>", "reviewer_id": "judge",
                 "model_id": "model, or the baseline"}
    EXPECTED = {
        "model": "the judged model's name (a non-empty string)",
        "games": "a list of one or two games (the baseline shown first, then the model), each an object or null",
        "uid": "the question's id (a number or a string)",
        "question_id": "the question's id (a number or a string)",
        "judge": "the judge model's name (a non-empty string)",
        "baseline": "the baseline model's name (a non-empty string)",
        "category": "the question's category, a string",
        "score": EXPECTED_VERDICT,
    }

    def __init__(self, options: FormatOptions, source: Source):
        super().__init__()
        folders = source.path.parent.parts if source.path is not None else ()
        under = len(folders) >= 3 and folders[-2] == JUDGMENTS
        self.judge = options.judge
        self.folder_judge = folders[-1] if under else None
        self.bench = options.bench or (folders[-3] if under else BENCH)
        self.baseline = options.baseline
        self.answers: dict[tuple[str, str], AnswerStyle] = {} if options.answers is None else answer_styles(
            options.answers)

    def records(self, line: Judgment) -> tuple[list[Values], int]:
        question = line.uid if line.uid is not None else line.question_id
        if question is None:
            raise LineError("uid", "missing; expected the question's id as uid (v2) or question_id (v0.1)")
        baseline, judge = self.baseline_of(line), self.judge_of(line)
        category = None if line.category is None else {"category": line.category[:METADATA_VALUE_MAX_CHARS]}
        shared = dict(schema_version=SLOTS, session_id=f"{self.bench}/{question}/{line.model}", timestamp="",
                      reviewer_id=judge, score_scale=SCALE, query_metadata=category)
        records, silent = [], 0
        for number, (game, shown) in enumerate(zip(line.games, ((baseline, line.model), (line.model, baseline)))):
            if game is None or game.score is None:
                silent += 1
                continue
            first = verdict(f"games[{number}].score", game.score)
            records += [dict(shared, model_id=name, position=slot, score_value=score, **self.answer(name, question))
                        for slot, (name, score) in enumerate(zip(shown, (first, 1.0 - first)))]
        return records, silent

    def columns(self, numbers: list[int], lines: list[Judgment]) -> ParsedColumns | None:
        """``records`` of every line at once (without --answers, whose style goes record by
        record); None where a line would be refused (the record path says why)."""
        if self.answers:
            return None
        at, sessions, judges, models, first, categories, silent = [], [], [], [], [], [], 0
        try:
            for index, line in enumerate(lines):
                question = line.uid if line.uid is not None else line.question_id
                if question is None:
                    return None
                baseline, judge = self.baseline_of(line), self.judge_of(line)
                category = None if line.category is None else line.category[:METADATA_VALUE_MAX_CHARS]
                for game, shown in zip(line.games, ((baseline, line.model), (line.model, baseline))):
                    if game is None or game.score is None:
                        silent += 1
                        continue
                    at += (index, index)
                    models += shown
                    first.append(VERDICTS[game.score])
                    sessions += (f"{self.bench}/{question}/{line.model}",) * 2
                    judges += ((judge, None),) * 2
                    categories += (category,) * 2
        except (KeyError, LineError):  # a verdict that is none, another baseline, no judge
            return None
        if not at:
            return None
        shown_first = np.array(first, dtype=np.float64)
        columns = record_columns(
            np.array(numbers)[at], sessions, judges, models, np.tile(np.array([0, 1], dtype=np.int32), len(first)),
            np.full(len(at), UNKNOWN_LENGTH, dtype=np.int32),
            np.column_stack([shown_first, 1.0 - shown_first]).ravel(), SLOTS, SCALE, categories=categories)
        return None if columns is None else ParsedColumns(columns=columns, no_verdict=silent)

    def baseline_of(self, line: Judgment) -> str:
        """The line's baseline (v2), else --baseline, else the format's default."""
        if self.baseline and line.baseline and line.baseline != self.baseline:
            raise LineError("baseline", "names another model than --baseline; expected the baseline the judge saw")
        baseline = line.baseline or self.baseline or DEFAULT_BASELINE
        if line.model == baseline:
            raise LineError("model", "is the baseline; expected a model judged against it")
        return baseline

    def judge_of(self, line: Judgment) -> str:
        """--judge, else the line's judge, else the folder the file is in."""
        judge = self.judge or line.judge or self.folder_judge
        if judge is None:
            raise LineError("judge", "missing, and the file is not in model_judgment/<judge>/; give --judge NAME")
        return judge

    def answer(self, model: str, question: int | str) -> Values:
        """The answer's length (unknown without --answers) and its known style fields."""
        found = self.answers.get((model, str(question)))
        return {"response_length_chars": None} if found is None else {"response_length_chars": found.chars,
                                                                       **found.style}
