"""Where a strategy's per-reviewer numbers come from: the command line, a config file, or the data.

* Weights (``weighted``) and offsets (``bias-adjusted``) can be given as ``REVIEWER=X,...`` or in
  a config file: TOML when the name ends in ``.toml``, JSON otherwise, holding a ``weights``
  and/or an ``offsets`` table of reviewer -> number. The command line wins per reviewer.
* Given offsets are complete: a reviewer not named gets offset 0 (ADR 0017's "bias
  adjustments" for the providers you know about). Without any, the offsets are the joint
  model's severities over the calibration window (relative to the average reviewer, and free
  of what each reviewer happened to review).
* ``normalized`` uses each reviewer's mean and SD (ddof=1) of its scores over the calibration
  window, self-reviews left out unless they are kept for the aggregation too.
"""

from __future__ import annotations

import difflib
import json
import math
import tomllib
from pathlib import Path

import numpy as np

from council_db.analysis.aggregation.strategies import Calibration, Method
from council_db.analysis.loading.score_data import ScoreData
from council_db.errors import CouncilDbError, UsageError

MIN_SESSIONS = 10  # below this (ADR-018's "insufficient" tier) estimated offsets or scales are refused
CONFIG_KEYS = ("weights", "offsets")


def parse_pairs(text: str | None, option: str) -> dict[str, float]:
    """``REVIEWER=NUMBER,...`` as a dict; a malformed item is a usage error naming it and the fix."""
    from council_db.text_values import parse_mapping

    if text is None:
        return {}
    try:
        return parse_mapping(text)
    except ValueError as error:
        raise UsageError(f"{option}: {str(error).replace('NAME=', 'REVIEWER=')}") from None


def read_config(path: Path) -> dict[str, dict[str, float]]:
    """The ``weights`` and ``offsets`` tables of a TOML (``.toml``) or JSON config file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise UsageError(f"--config: cannot read {path}: {error.strerror}") from None
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"--config: {path} is not valid TOML: {error}") from None
    except json.JSONDecodeError as error:
        raise UsageError(f"--config: {path} is not valid JSON: {error.msg} at line {error.lineno}, "
                         f"column {error.colno} (a name ending in .toml is read as TOML)") from None
    example = '{"weights": {"openai/gpt-4o": 2}, "offsets": {"openai/gpt-4o": -0.5}}'
    if not isinstance(data, dict) or set(data) - set(CONFIG_KEYS):
        unknown = sorted(set(data) - set(CONFIG_KEYS)) if isinstance(data, dict) else []
        raise UsageError(f"--config: {path}: " + (f"unknown key(s) {', '.join(unknown)}; " if unknown else "")
                         + f"expected tables 'weights' and/or 'offsets' of reviewer -> number, e.g. {example}")
    tables: dict[str, dict[str, float]] = {}
    for key in CONFIG_KEYS:
        table = data.get(key, {})
        bad = [name for name, value in table.items() if isinstance(value, bool)
               or not isinstance(value, (int, float)) or not math.isfinite(value)] \
            if isinstance(table, dict) else ["(not a table)"]
        if bad:
            raise UsageError(f"--config: {path}: '{key}' must map reviewer ids to numbers; "
                             f"bad entry: {bad[0]}; e.g. {example}")
        tables[key] = {str(name): float(value) for name, value in table.items()}
    return tables


def check_reviewers(given: dict[str, float], known: list[str], option: str) -> None:
    """Every reviewer named must be one the database knows (a typo would silently do nothing)."""
    for name in given:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean {close[0]}?" if close else f"known reviewers: {', '.join(known) or 'none'}"
            raise UsageError(f"{option}: unknown reviewer {name!r}; {hint}")


def check_weights(weights: dict[str, float]) -> None:
    negative = [name for name, w in weights.items() if w < 0]
    if negative:
        raise UsageError(f"--weights: weight of {negative[0]} is {weights[negative[0]]}; weights must be >= 0 "
                         "(0 leaves a reviewer out)")


def calibrate(method: Method, window: ScoreData, *, weights: dict[str, float], offsets: dict[str, float],
              include_self: bool) -> Calibration:
    """The calibration ``method`` needs, from what was given or estimated over ``window``."""
    if method is Method.weighted:
        check_weights(weights)
        return Calibration(weights=weights, source="given weights; reviewers not named weigh 1")
    if method is Method.bias_adjusted:
        if offsets:
            return Calibration(offsets={**dict.fromkeys(window.reviewers, 0.0), **offsets},
                               source="given offsets; reviewers not named get 0")
        return _estimated_offsets(window)
    if method is Method.normalized:
        return _reviewer_scales(window, include_self)
    return Calibration()


def _too_little(what: str, window: ScoreData, fix: str) -> CouncilDbError:
    return CouncilDbError(f"{what} need at least {MIN_SESSIONS} sessions of scores; the calibration window has "
                          f"{window.n_sessions} session(s) ({window.n_records} records). {fix}")


def _estimated_offsets(window: ScoreData) -> Calibration:
    """Reviewer severities of the joint model (score points vs the average reviewer)."""
    from council_db.analysis.joint import joint_model

    fix = "Widen the window, or give --offsets REVIEWER=X,... (or an offsets table in --config)."
    if window.n_sessions < MIN_SESSIONS:
        raise _too_little("estimated reviewer offsets", window, fix)
    fit = joint_model.fit(window)
    offsets = {name: effect.estimate for name, effect in fit.severity.items() if effect.identified}
    if not offsets:
        raise CouncilDbError(f"the joint model could not estimate any reviewer severity "
                             f"({'; '.join(fit.warnings) or 'no usable records'}). {fix}")
    groups = "" if len(fit.groups) <= 1 else \
        f"; warning: {len(fit.groups)} unconnected reviewer groups, offsets comparable only within a group"
    return Calibration(offsets=offsets, n_sessions=fit.n_sessions, n_records=fit.n_records,
                       source=f"joint-model severities over {fit.n_sessions} sessions{groups}")


def _reviewer_scales(window: ScoreData, include_self: bool) -> Calibration:
    """Each reviewer's mean and SD over the window (reviewers with < 2 scores or no spread get none)."""
    if window.n_sessions < MIN_SESSIONS:
        raise _too_little("per-reviewer means and SDs", window, "Widen the window, or use another --method.")
    keep = np.ones(window.n_records, dtype=bool) if include_self else ~window.self_review
    reviewer, score = window.reviewer[keep], window.score[keep]
    n = np.bincount(reviewer, minlength=len(window.reviewers))
    total = np.bincount(reviewer, weights=score, minlength=len(window.reviewers))
    squares = np.bincount(reviewer, weights=score * score, minlength=len(window.reviewers))
    means, sds = {}, {}
    for r in np.flatnonzero(n >= 2).tolist():
        mean = total[r] / n[r]
        sd = math.sqrt(max(squares[r] - n[r] * mean * mean, 0.0) / (n[r] - 1))
        if sd > 0:
            means[window.reviewers[r]], sds[window.reviewers[r]] = float(mean), sd
    return Calibration(means=means, sds=sds, n_sessions=window.n_sessions, n_records=int(keep.sum()),
                       source=f"per-reviewer mean and SD over {window.n_sessions} sessions")
