"""What an Inspect sample's model-graded score says: who graded (and how), and the score.

A score is model-graded when its scorer called a model: a ``model`` event inside the sample's
scorer span (its ``span_begin`` of type "scorer", named as the score; in older logs between the
scorer's ``step`` events), or a ``model`` option of
the scorer in ``eval.scorers``, or a scorer named ``model_graded_*`` (Inspect's model_graded_qa
and model_graded_fact), which grades with ``eval.model_roles["grader"]``, else with the model
under test itself (``eval.model``). Other scorers (match, includes, ...) are no judges: skipped.
A score for which several models were called (``model_graded_qa(model=[a, b, c])``, whose
verdict is their majority vote) is one verdict of that panel: its reviewer is ``a+b+c``.

Scores (inspect_ai/scorer/_metric.py): the letters C (correct), P (partial), I (incorrect) are
put on the "1-3" scale as 3, 2, 1 (Inspect's own value_to_float reads them 1, 0.5, 0: the same
order and spacing), so that 0 stays llm-council's "never scored" marker; true and false are C
and I. A grade the grader's answer did not give (Inspect's "Grade not found in model output"
explanation, or a null or NaN value) is stored as that 0: kept, and left out of every analysis,
never read as a wrong answer. Numbers are kept as they are, on ``--scale`` or the scale
inferred from the log's first scores. An object of named scores is a rubric: its values are
the record's dimensions (on one scale) and its overall score is their mean.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, replace
from typing import Any, Union

import msgspec

from council_db.contract.fields import LineError
from council_db.ingest.formats.inspect_files import Spec

LETTERS = {"C": 3.0, "P": 2.0, "I": 1.0}
LETTER_SCALE = "1-3"
UNSCORED = 0.0  # llm-council's "never scored", which every analysis leaves out
NOT_FOUND = "Grade not found in model output"  # the explanation of Inspect's model-graded scorers
MODEL_GRADED = "model_graded_"
PANEL = "+"  # between the models of one score graded by several (model_graded_qa(model=[...]) votes)


class Event(msgspec.Struct):
    """The fields of a transcript event read here; any other field of any event is skipped."""

    event: str
    id: Union[str, None] = None
    span_id: Union[str, None] = None
    parent_id: Union[str, None] = None
    action: Union[str, None] = None  # a step event's begin or end
    type: Union[str, None] = None
    name: Union[str, None] = None
    model: Union[str, None] = None
    config: Union[dict[str, Any], None] = None
    timestamp: Union[str, None] = None


@dataclass(frozen=True)
class Grader:
    """Who graded a score and how, as far as the log says."""

    model: Union[str, None]  # None: the log names no model for the scorer
    prompt: Union[str, None] = None  # the scorer's name (its default template) or a digest of its template
    temperature: Union[float, None] = None
    seed: Union[int, None] = None
    time: Union[str, None] = None  # when the score was given


@dataclass(frozen=True)
class Grade:
    value: float
    scale: str
    dimensions: Union[dict[str, float], None] = None


def scorer_spans(events: list[Event]) -> dict[str, tuple[list[Event], Union[str, None]]]:
    """Each scorer span's name -> (its model events, the time of its score event). Logs of
    Inspect before spans (0.3.7x) mark a scorer's events by ``step`` events around them."""
    parents = {event.id: event.parent_id for event in events if event.event == "span_begin"}
    scorers = {event.id: event.name for event in events
               if event.event == "span_begin" and event.type == "scorer" and event.name}
    found: dict[str, tuple[list[Event], Union[str, None]]] = {}
    step = None  # the scorer step the events are in (older logs)
    for event in events:
        if event.event == "step" and event.type == "scorer":
            step = event.name if event.action == "begin" else None
        name = _scorer_of(event.span_id, scorers, parents) or step
        if name is None or event.event not in ("model", "score"):
            continue
        calls, time = found.get(name, ([], None))
        if event.event == "model" and event.model:
            calls.append(event)
        elif event.event == "score":
            time = event.timestamp
        found[name] = (calls, time)
    return found


def _scorer_of(span: Union[str, None], scorers: dict, parents: dict) -> Union[str, None]:
    """The scorer whose span holds ``span`` (directly or through nested spans)."""
    seen = 0
    while span is not None and seen < 100:
        if span in scorers:
            return scorers[span]
        span, seen = parents.get(span), seen + 1
    return None


def grader(configured: Grader, calls: list[Event], time: Union[str, None]) -> Union[Grader, None]:
    """Who graded a score: the model its scorer span called (with that call's sampling
    settings), else the grader its scorer is ``configured`` with; None when neither names a
    model (the scorer is no model grader). Several models called are one panel's vote."""
    models = list(dict.fromkeys(call.model for call in calls))
    if len(models) == 1:
        return Grader(models[0], configured.prompt, *_sampling(calls[0].config), time)
    if models:
        return Grader(PANEL.join(models), configured.prompt, None, None, time)
    return None if configured.model is None else replace(configured, time=time)


def configured(spec: Spec, name: str) -> Grader:
    """The grader the log's eval gives the scorer ``name``: its ``model`` option, else (a
    ``model_graded_*`` scorer) the grader role, else the model under test; else no model (a
    scorer that calls one all the same shows it in its span)."""
    options = _options(spec, name)
    prompt = _prompt(name, options)
    model = options.get("model")
    if isinstance(model, list) and model and all(isinstance(name, str) for name in model):
        model = PANEL.join(model)
    if isinstance(model, str) and model:
        return Grader(model, prompt, *_sampling(options.get("config")))
    if _bare(name).startswith(MODEL_GRADED):
        role = (spec.model_roles or {}).get("grader")
        if role is not None:
            return Grader(role.model, prompt, *_sampling(role.config))
        return Grader(spec.model, prompt)
    return Grader(None, prompt)


def _options(spec: Spec, name: str) -> dict[str, Any]:
    """The options of the scorer ``name`` in eval.scorers (by name, with or without its package)."""
    for scorer in spec.scorers or ():
        if name in (scorer.name, _bare(scorer.name)):
            return scorer.options or {}
    return {}


def _bare(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def _prompt(name: str, options: dict[str, Any]) -> str:
    """A template given as text is named by a short digest of it (never the text); else the
    scorer's name names its default template."""
    template = options.get("template")
    if isinstance(template, str) and template:
        return "sha256:" + hashlib.sha256(template.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return _bare(name)[:500]


def _sampling(config: Any) -> tuple[Union[float, None], Union[int, None]]:
    """(temperature, seed) of a generate config, where it sets them."""
    if not isinstance(config, dict):
        return None, None
    temperature, seed = config.get("temperature"), config.get("seed")
    temperature = float(temperature) if isinstance(temperature, (int, float)) and not isinstance(temperature, bool) \
        else None
    seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else None
    return temperature, seed


def failed(value: Any, explanation: Union[str, None]) -> bool:
    """The grader gave no grade that could be read (its value then is a default, not a verdict)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    return isinstance(explanation, str) and explanation.startswith(NOT_FOUND)


def grade(field: str, value: Any, numeric_scale: Union[str, None]) -> Grade:
    """The score on its scale: a letter (or true/false) on 1-3, a number on the numeric scale,
    an object of either as dimensions whose mean is the overall score."""
    if isinstance(value, dict):
        return _rubric(field, value, numeric_scale)
    return Grade(*_scalar(field, value, numeric_scale))


def unscored(value: Any, numeric_scale: Union[str, None]) -> Union[Grade, None]:
    """A failed grade as "never scored" on the scale it would have had: 0 on 1-3 for letters,
    or on a numeric scale above 0; None when that scale holds 0 (no marker: no record)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
        if numeric_scale is None or float(numeric_scale.split("-")[0]) <= 0:
            return None
        return Grade(UNSCORED, numeric_scale)
    return Grade(UNSCORED, LETTER_SCALE)


def _scalar(field: str, value: Any, numeric_scale: Union[str, None]) -> tuple[float, str]:
    if isinstance(value, bool):
        return LETTERS["C" if value else "I"], LETTER_SCALE
    if isinstance(value, str):
        if value not in LETTERS:
            raise LineError(field, f"a string of {len(value):,} characters that is no grade; expected C, P or I, a "
                                   "number, true or false, or an object of them")
        return LETTERS[value], LETTER_SCALE
    if isinstance(value, (int, float)):
        if numeric_scale is None:
            raise LineError(field, "a number, and the log's first scores gave no scale to put it on; give --scale "
                                   "LOW-HIGH")
        return float(value), numeric_scale
    raise LineError(field, f"got a {type(value).__name__}; expected C, P or I, a number, true or false, or an "
                           "object of them")


def _rubric(field: str, value: dict[str, Any], numeric_scale: Union[str, None]) -> Grade:
    """Named scores as dimensions on one scale, overall their mean."""
    if not value:
        raise LineError(field, "an empty object; expected named scores (C, P, I or numbers)")
    scored = {name: _scalar(f"{field}.{name}", score, numeric_scale) for name, score in value.items()}
    scales = {scale for _, scale in scored.values()}
    if len(scales) > 1:
        raise LineError(field, "named scores of letters and numbers together; expected all on one scale")
    dimensions = {name: score for name, (score, _) in scored.items()}
    return Grade(sum(dimensions.values()) / len(dimensions), scales.pop(), dimensions)


def numbers(value: Any) -> list[float]:
    """The numeric scores in a score value (a number, or an object's numbers)."""
    values = value.values() if isinstance(value, dict) else (value,)
    return [float(v) for v in values
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(float(v))]
