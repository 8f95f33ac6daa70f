"""promptfoo's eval results: ``results.json`` of output version 3 (promptfoo_document.py).

What promptfoo writes (promptfoo/promptfoo, src/types/index.ts, EvaluateResult and
GradingResult): one result per test case (``testIdx``, ``vars``) and prompt column
(``promptIdx``: a prompt run by one provider), with the provider under test (``provider.id``,
``provider.label``), the prompt (``prompt.label``), its answer (``response.output``) and the
grading of every assertion of the test (``gradingResult.componentResults``: each with its
``assertion`` (type, value, provider, rubricPrompt), ``pass``, ``score`` and, where the grader
gave them, ``namedScores``).

What a model-graded component becomes (MODEL_GRADED; other assertions, such as contains or
latency, are no judge's and are not read): one record.
- session: the test's item judged on one criterion, ``<bench>/v<12 hex of the test's vars>/<type>-<8
  hex of the assertion's value>`` (bench "promptfoo" or ``--bench``): every provider's answer
  to the test, from this eval or another with the same vars, meets the others there.
- candidate: ``provider.label``, else ``provider.id``; position: not a display slot (schema
  1.0.0) but a 31-bit digest of evalId, testIdx and promptIdx, so two prompts of one provider
  in one test, and two runs of one eval, are kept apart; importing a file twice stores it once.
- reviewer: the grading provider (grader.py's order); reviewer_prompt the assertion type, or
  a digest of a custom rubricPrompt; the grader's configured temperature and seed.
- score: the component's score on the "0-1" scale; dimensions: its namedScores and ``pass``
  (1 or 0: the grader's own verdict, which may differ from score >= 0.5).
- length: the characters of ``response.output`` (unknown when the output is not text);
  time: ``results.timestamp``, when the eval ran; council_config_version: the prompt's label
  (else its id): the prompt the candidate answered.
- A component without a numeric score, or a result without gradingResult or its components
  (the grading failed), is no verdict: no record, counted per model-graded assertion of the test.
- ``select-best`` is one pick among the test's outputs: 1 for the chosen, 0 for the others,
  in a session of its own (the type is in the key): a comparative verdict, as pairwise formats'.
"""

from __future__ import annotations

import hashlib
import re
from typing import Annotated, Any, Union

import msgspec

from council_db.contract.fields import LineError
from council_db.errors import CouncilDbError
from council_db.ingest.formats.document_reader import DocumentReader
from council_db.ingest.formats.judge_lines import Name, Values
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.formats.promptfoo_document import WHAT, ResultsDocument, config_from_end
from council_db.ingest.formats.promptfoo_grader import Grader, digest
from council_db.ingest.sources import Source

SCALE = "0-1"
NOT_A_SLOT = "1.0.0"  # the schema whose position is no display slot
BENCH = "promptfoo"
PASS = "pass"  # the dimension that keeps the grader's pass (1) or fail (0)
MODEL_GRADED = ("llm-rubric", "g-eval", "model-graded-closedqa", "factuality", "model-graded-factuality",
                "answer-relevance", "context-faithfulness", "context-recall", "context-relevance", "search-rubric",
                "select-best")
Index = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
_AT = re.compile(r" - at `\$\.?([^`]*)`")  # where msgspec found a problem: $.gradingResult.componentResults[0].score


class Assertion(msgspec.Struct):
    type: str
    value: Any = None
    provider: Any = None
    rubricPrompt: Any = None


class Component(msgspec.Struct):
    assertion: Union[Assertion, None] = None
    score: Union[float, None] = None
    passed: Union[bool, None] = msgspec.field(name="pass", default=None)
    namedScores: Union[dict[str, float], None] = None


class Grading(msgspec.Struct):
    componentResults: Union[list[Component], None] = None


class Provider(msgspec.Struct):
    id: Name
    label: Union[str, None] = None


class Prompt(msgspec.Struct):
    label: Union[str, None] = None
    id: Union[str, None] = None


class Response(msgspec.Struct):
    output: Any = None


class TestCase(msgspec.Struct):
    options: Union[dict[str, Any], None] = None
    asserts: Union[list[Any], None] = msgspec.field(name="assert", default=None)


class Result(msgspec.Struct):
    provider: Provider
    testIdx: Index
    promptIdx: Index
    vars: Union[dict[str, Any], None] = None
    prompt: Union[Prompt, None] = None
    promptId: Union[str, None] = None
    response: Union[Response, None] = None
    gradingResult: Union[Grading, None] = None
    testCase: Union[TestCase, None] = None


def column_key(eval_id: str | None, test: int, column: int) -> int:
    """A 31-bit digest of the eval, the test and the prompt column: the record's position."""
    text = f"{eval_id}/{test}/{column}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(text, digest_size=4).digest(), "little") & 0x7FFF_FFFF


def readable(source: Source) -> None:
    """CouncilDbError for a stream: the config, read from the file's end, follows the results.
    (The sniffer judges the file's start: ingest/sniff.py.)"""
    if source.path is None or source.kind in ("stdin", "stream"):
        raise CouncilDbError(f"{source.name}: {WHAT} names its default grader in its config, after the results: "
                             "give the file's path, not a stream")


class Reader(DocumentReader):
    FORMAT = WHAT
    line_type = Result
    MADE_FROM = {"session_id": "<bench>/v<hash of vars>/<assertion type>-<hash of its value>",
                 "reviewer_id": "the grading provider (assertion.provider, testCase.options.provider, "
                                "config.defaultTest.options.provider, else promptfoo's default)",
                 "model_id": "provider.label or provider.id", "council_config_version": "prompt.label or prompt.id",
                 "timestamp": "results.timestamp", "score_dimensions": "namedScores and pass",
                 "reviewer_temperature": "the grading provider's config.temperature",
                 "reviewer_seed": "the grading provider's config.seed"}
    EXPECTED = {
        "provider": 'the provider under test, {"id": "openai:gpt-5", "label": ...}',
        "testIdx": "the test case's index, a whole number >= 0",
        "promptIdx": "the prompt column's index, a whole number >= 0",
        "vars": "the test's variables, an object",
        "prompt": 'the prompt, {"label": ..., "raw": ...}',
        "response": 'the provider\'s answer, {"output": ...}',
        "gradingResult": "the grading, an object with componentResults",
        "componentResults": "a list of the assertions' grading results",
        "assertion": 'the assertion graded, {"type": "llm-rubric", "value": ...}',
        "score": "the grader's score, a number from 0 to 1",
        "pass": "the grader's verdict, true or false",
        "namedScores": "named sub-scores, an object of numbers",
        "testCase": "the test case, an object",
        "options": "the test's options, an object",
    }

    @classmethod
    def check_source(cls, options: FormatOptions, source: Source) -> None:
        readable(source)

    @classmethod
    def required_fields(cls) -> tuple[str, ...]:
        """The document's, not a result's: a list of results alone is no results.json."""
        return ("evalId", "results", "config")

    def __init__(self, options: FormatOptions, source: Source):
        super().__init__()
        self.bench = options.bench or BENCH
        config = None if source.path is None else config_from_end(source.path, source.kind == "gzip")
        self.grader = Grader(config, options.judge)
        self.warnings = [] if config is not None else [
            f"{source.name}: no config found at the file's end; each grader is the assertion's or the test's, "
            "else promptfoo's default"]
        self.elements = ResultsDocument()

    def _explain(self, error: Exception) -> LineError:
        """As every format's, naming the field by its whole path: a result nests its gradings."""
        explained = super()._explain(error)
        at = _AT.search(str(error))
        if explained.field is None or at is None or not at[1]:
            return explained
        missing = "missing required field" in str(error)
        path = f"{at[1]}.{explained.field}" if missing else at[1]
        name = explained.field if missing else re.sub(r"\[\d+\]$", "", path).rsplit(".", 1)[-1]
        problem = explained.problem.split("; expected ")[0]
        return LineError(path, f"{problem}; expected {self.EXPECTED.get(name, f'a value as {self.FORMAT} writes it')}")

    def records(self, line: Result) -> tuple[list[Values], int]:
        components = line.gradingResult.componentResults if line.gradingResult is not None else None
        if not components:  # the grading failed: each model-graded assertion gave no verdict
            asserts = line.testCase.asserts if line.testCase is not None and line.testCase.asserts else []
            return [], sum(isinstance(item, dict) and item.get("type") in MODEL_GRADED for item in asserts)
        header = self.elements.header
        shared = dict(schema_version=NOT_A_SLOT, timestamp=header.timestamp or "",
                      model_id=line.provider.label or line.provider.id,
                      position=column_key(header.eval_id, line.testIdx, line.promptIdx),
                      response_length_chars=_length(line.response), score_scale=SCALE,
                      council_config_version=_prompt(line))
        items = f"{self.bench}/v{digest(line.vars or {}, 12)}"
        records, silent = [], 0
        for number, component in enumerate(components):
            assertion = component.assertion
            if assertion is None or assertion.type not in MODEL_GRADED:
                continue
            if component.score is None:
                silent += 1
                continue
            where = f"gradingResult.componentResults[{number}]"
            records.append(dict(shared, session_id=f"{items}/{assertion.type}-{digest(assertion.value, 8)}",
                                score_value=component.score, score_dimensions=_dimensions(component),
                                **self.grader.of(where, assertion, line.testCase)))
        return records, silent


def _length(response: Response | None) -> int | None:
    """The answer's characters; unknown when it is missing or not text (a JSON output)."""
    output = None if response is None else response.output
    return len(output) if isinstance(output, str) else None


def _prompt(line: Result) -> str | None:
    """The prompt the candidate answered: its label, else its id (cut to what a record keeps)."""
    named = line.prompt.label if line.prompt is not None and line.prompt.label else line.promptId
    if named is None and line.prompt is not None:
        named = line.prompt.id
    return named[:500] if named else None


def _dimensions(component: Component) -> dict[str, float] | None:
    """The grader's named sub-scores, and its pass as 1 or 0 (unless a sub-score is named pass)."""
    named = dict(component.namedScores or {})
    if component.passed is not None:
        named.setdefault(PASS, float(component.passed))
    return named or None
