"""An OpenAI evals log's first line: whose answers the grader scored, and with which prompt.

oaieval's LocalRecorder (openai/evals, evals/record.py) starts a log with ``{"spec": RunSpec}``:
completion_fns (as given to ``oaieval``), eval_name, base_eval, split, run_id, created_at and
run_config, whose eval_spec holds the eval's class (cls) and its registry args. A model-graded
eval (evals/elsuite/modelgraded/classify.py, ModelBasedClassify) names its grading prompt in
args.modelgraded_spec (a file of evals/registry/modelgraded/, e.g. "fact", "closedqa"), may
set args.eval_type (the answer prompt appended to it: classify, cot_classify, ...) and
args.eval_kwargs (what the grader is called with: temperature, seed), and treats the LAST
completion fn as the grader: ``oaieval gpt-4o-mini,gpt-4o fact`` has gpt-4o grade gpt-4o-mini's
answers, and ``oaieval gpt-4o fact`` has gpt-4o grade its own.

A run that compares several completions in one grading (args.multicomp_n, or more than two
completion fns) makes the grader pick an answer, not score one; an eval without a
modelgraded_spec has no grader at all (its "match" events compare with an ideal answer). Both
are refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Union

import msgspec

from council_db.contract.fields import LineError
from council_db.ingest.formats.judge_lines import Name

NOT_MODEL_GRADED = ("is not model-graded (its eval_spec.args has no modelgraded_spec): its events compare answers "
                    "with an ideal one, and no judge scored them; --from openai-evals reads the logs of model-graded "
                    "evals (ModelBasedClassify, evals/registry/modelgraded/)")
_AT = re.compile(r" - at `\$((?:\.\w+|\[\d+\])*)`")
_MISSING = re.compile(r"missing required field `(\w+)`")
_GOT = re.compile(r"got `(\w+)`")
_LIMIT = re.compile(r"^Expected (.+?) - at ")


class EvalKwargs(msgspec.Struct):
    temperature: Union[float, None] = None
    seed: Union[int, None] = None


class EvalArgs(msgspec.Struct):
    modelgraded_spec: Union[Name, None] = None
    eval_type: Union[Name, None] = None
    multicomp_n: Union[int, str] = 1
    eval_kwargs: Union[EvalKwargs, None] = None


class EvalSpec(msgspec.Struct):
    cls: str = ""
    args: EvalArgs = msgspec.field(default_factory=EvalArgs)


class RunConfig(msgspec.Struct):
    eval_spec: EvalSpec


class RunSpec(msgspec.Struct):
    completion_fns: Annotated[list[Name], msgspec.Meta(min_length=1)]
    eval_name: Name
    run_id: Name
    run_config: RunConfig
    base_eval: Union[str, None] = None


EXPECTED = {
    "completion_fns": "the completion fns as oaieval was given them, a non-empty list of names",
    "eval_name": "the eval's name, e.g. fact.dev.v0",
    "run_id": "the run's id, a non-empty string",
    "run_config": "an object holding eval_spec",
    "eval_spec": "an object holding the eval's cls and args",
    "args": "the eval's registry args, an object",
    "modelgraded_spec": "the grading prompt's name (a non-empty string), e.g. fact",
    "eval_type": "the answer prompt's name (a non-empty string), e.g. cot_classify",
    "multicomp_n": "a number, or from_models",
    "eval_kwargs": "what the grader is called with, an object",
    "temperature": "the grader's temperature, a number",
    "seed": "the grader's seed, an integer",
}
_DECODER = msgspec.json.Decoder(RunSpec)


@dataclass(frozen=True)
class Run:
    """What every graded sample of one run shares."""

    run_id: str
    candidate: str  # the completion fn whose answers were graded
    grader: str  # the completion fn that graded them (the last one given)
    prompt: str  # the modelgraded spec, with its answer prompt: "closedqa" or "closedqa/cot_classify"
    temperature: float | None
    seed: int | None
    eval_name: str

    @property
    def category(self) -> str:
        """The records' category: the eval's base name ("fact" of fact.dev.v0), as kept."""
        return self.eval_name.split(".")[0][:100]


class NotGraded(ValueError):
    """A run whose log holds no judge's scores of single answers; the message says why."""


def run_of(spec: bytes) -> Run:
    """The run a spec line's ``spec`` object describes. LineError names a field that does not
    fit (as ``spec.run_config...``); NotGraded says why a run has no grader's scores to read."""
    try:
        found = _DECODER.decode(spec)
    except msgspec.ValidationError as error:
        raise spec_problem(error) from None
    except msgspec.DecodeError:
        raise LineError("spec", "not an object; expected oaieval's run spec") from None
    args = found.run_config.eval_spec.args
    named = f"the eval {found.eval_name} ({found.run_config.eval_spec.cls or 'no class'})"
    if args.modelgraded_spec is None:
        raise NotGraded(f"{named} {NOT_MODEL_GRADED}")
    functions = found.completion_fns
    if len(functions) > 2 or args.multicomp_n != 1:
        raise NotGraded(f"{named} shows the grader several completions at once (multicomp_n "
                        f"{args.multicomp_n!r}, {len(functions)} completion fns): it picks an answer and scores none; "
                        "--from openai-evals reads gradings of one answer")
    kwargs = args.eval_kwargs or EvalKwargs()
    prompt = args.modelgraded_spec if args.eval_type is None else f"{args.modelgraded_spec}/{args.eval_type}"
    return Run(found.run_id, functions[0], functions[-1], prompt, kwargs.temperature, kwargs.seed, found.eval_name)


def spec_problem(error: msgspec.ValidationError) -> LineError:
    """msgspec's complaint about the spec object as a LineError naming the field's whole path."""
    message = str(error)
    at, missing = _AT.search(message), _MISSING.search(message)
    got, limit = _GOT.search(message), _LIMIT.search(message)
    path = "spec" + (at[1] if at else "") + (f".{missing[1]}" if missing else "")
    field = re.sub(r"\[\d+\]$", "", path.rsplit(".", 1)[-1])
    problem = "missing" if missing else f"got a {got[1]}" if got else f"not {limit[1]}" if limit else "not valid"
    return LineError(path, f"{problem}; expected {EXPECTED.get(field, 'a value as oaieval writes it')}")
