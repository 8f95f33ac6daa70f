"""AlpacaEval's annotations: ``results/<model>/<annotator>/annotations.json``.

What AlpacaEval writes (tatsu-lab/alpaca_eval, annotators/pairwise_evaluator.py): one JSON list
of objects, each a comparison of two answers to an instruction: instruction, output_1 (the
baseline's answer), generator_1 (the baseline), output_2 and generator_2 (the model
evaluated), annotator (the judge configuration) and preference: 1 when output_1 is better, 2
when output_2 is, 1.5 a tie, a weighted annotator's probability in [1, 2] (1 plus the chance
that output_2 is better), 0 for identical outputs (alpaca_eval reads it as 1.5, "for backward
compatibility"), null when the judge's answer could not be parsed. Often also dataset (the
instruction's source), raw_completion, time_per_example, price_per_example, which are not read
beyond dataset. AlpacaEval shows the two outputs in a random order and does not record it.

What an entry becomes: one session per instruction and model (``alpaca_eval/i<12 hex
characters of a hash of the instruction>/<generator_2>``; ``--bench NAME`` replaces
"alpaca_eval"), so every model's file meets the same instructions in sessions of its own,
and every annotator's verdict on one model's answer in the same session. Its two candidates
are generator_1 and generator_2, their lengths the outputs' characters, in no display slot,
on the "0-1" scale: each answer's probability of being preferred (2 - preference for
output_1, preference - 1 for output_2), so the model's mean score is AlpacaEval's raw win
rate. The reviewer is the annotator (``--judge NAME`` names it); the category is dataset. A
null preference is no verdict: no record, counted in the summary. The entries are undated.
The list is read as its lines come (json_list), one entry held at a time.
"""

from __future__ import annotations

import hashlib
from typing import Union

import msgspec

from council_db.contract.fields import LineError
from council_db.ingest.formats.document_reader import DocumentReader
from council_db.ingest.formats.json_list import ListElements
from council_db.ingest.formats.judge_lines import Name, Values
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.sources import Source

SCALE = "0-1"
SLOTS = "1.2.0"  # the schema whose position is the display slot: here none is given
BENCH = "alpaca_eval"
IDENTICAL = 0.0  # alpaca_eval's old mark of identical outputs, read by its metrics as a tie (1.5)


class Annotation(msgspec.Struct):
    instruction: str
    output_1: str
    generator_1: Name
    output_2: str
    generator_2: Name
    preference: Union[float, None]
    annotator: Union[Name, None] = None
    dataset: Union[str, None] = None


def scores(preference: float) -> tuple[float, float]:
    """(output_1's, output_2's) probability of being preferred."""
    if preference == IDENTICAL:
        return 0.5, 0.5
    if not 1.0 <= preference <= 2.0:
        raise LineError("preference", f"{preference!r} is outside [1, 2]; expected 1 (output_1 better), 2 "
                                      "(output_2 better), 1.5 (a tie) or a weighted annotator's value between; 0 "
                                      "for identical outputs, null for no verdict")
    return 2.0 - preference, preference - 1.0


class Reader(DocumentReader):
    FORMAT = "AlpacaEval's annotations.json"
    line_type = Annotation
    MADE_FROM = {"session_id": "<bench>/i<hash of the instruction>/<generator_2>",
                 "reviewer_id": "annotator (or --judge)", "model_id": "generator_1 or generator_2"}
    EXPECTED = {
        "instruction": "the instruction, a string",
        "output_1": "the baseline's answer, a string",
        "generator_1": "the baseline's name (a non-empty string)",
        "output_2": "the model's answer, a string",
        "generator_2": "the model's name (a non-empty string)",
        "preference": "1 (output_1 better) to 2 (output_2 better), 1.5 a tie, 0 identical outputs, or null",
        "annotator": "the annotator's name (a non-empty string)",
        "dataset": "the instruction's source, a string",
    }

    def __init__(self, options: FormatOptions, source: Source):
        super().__init__()
        self.judge = options.judge
        self.bench = options.bench or BENCH
        self.elements = ListElements(self.FORMAT)

    def records(self, line: Annotation) -> tuple[list[Values], int]:
        if line.preference is None:
            return [], 1
        baseline, model = line.generator_1, line.generator_2
        if baseline == model:
            raise LineError("generator_2", "is generator_1 again (the baseline against itself): no comparison to "
                                           "store")
        reviewer = self.judge or line.annotator
        if reviewer is None:
            raise LineError("annotator", "missing; give --judge NAME, the annotator that judged the file")
        digest = hashlib.sha256(line.instruction.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        category = None if line.dataset is None else {"category": line.dataset[:100]}
        shared = dict(schema_version=SLOTS, session_id=f"{self.bench}/i{digest}/{model}", timestamp="",
                      reviewer_id=reviewer, score_scale=SCALE, position=None, query_metadata=category)
        answers = ((baseline, line.output_1), (model, line.output_2))
        return [dict(shared, model_id=name, response_length_chars=len(text), score_value=score)
                for (name, text), score in zip(answers, scores(line.preference))], 0
