"""What `council-db scores` and `council-db leaderboard` compute from the database: plain
dicts (JSON-ready) that say which method, calibration, window and sample sizes they rest on."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from council_db.analysis.aggregation.calibrated_by_people import Ranking, people_calibrated
from council_db.analysis.aggregation.calibration import calibrate, check_reviewers
from council_db.analysis.aggregation.leaderboard import N_BOOT, leaderboard
from council_db.analysis.aggregation.pairwise_board import N_BOOT as PAIRWISE_BOOT
from council_db.analysis.aggregation.pairwise_board import pairwise_board
from council_db.analysis.aggregation.quality import INTERVAL, length_warning, quality_standings
from council_db.analysis.aggregation.strategies import REMOVES, Calibration, Method, consensus
from council_db.analysis.joint import joint_model
from council_db.analysis.loading.window import (
    SAMPLE_SESSIONS,
    Window,
    WindowData,
    load_sample,
    load_sessions,
    sample_note,
    unreadable_warnings,
)
from council_db.analysis.stats import Estimate, confidence_tier
from council_db.contract.timestamps import format_us
from council_db.errors import CouncilDbError
from council_db.store.database import Database

NEEDS_WINDOW = (Method.bias_adjusted, Method.normalized)
PPI_INTERVAL = "95% t intervals of the prediction-powered estimate (CR1 by session, Satterthwaite df); ranks: from " \
               "those CIs (a rank interval spans every model whose CI overlaps its own)"


@dataclass(frozen=True)
class Settings:
    """One aggregation as the user asked for it."""

    method: Method
    weights: dict[str, float]
    offsets: dict[str, float]
    include_self: bool = False
    style: tuple[str, ...] = ()  # bradley-terry: style covariates ("length", "markdown")
    baseline: str | None = None  # bradley-terry: the candidate strengths and win rates are against
    strong_as_three: bool = False  # bradley-terry: arena-hard's A>>B as three wins, not the ordinal model


def check_names(db: Database, settings: Settings) -> None:
    """Reviewers named in weights or offsets must be stored ids (a typo would silently do nothing)."""
    from sqlalchemy import text

    with db.engine.connect() as connection:
        known = sorted(connection.execute(text("SELECT name FROM models")).scalars())
    check_reviewers(settings.weights, known, "--weights")
    check_reviewers(settings.offsets, known, "--offsets")


def session_scores(db: Database, session_key: str, settings: Settings, sample_sessions: int = SAMPLE_SESSIONS,
                   dimension: str | None = None) -> dict[str, Any]:
    """Each candidate's consensus score in one session (with ``dimension``, of that rubric
    dimension's scores). Offsets and scales a method estimates come from every stored session
    (the calibration window; above ``sample_sessions``, the bias report's sample of them), on
    the session's scale."""
    data = load_sessions(db, "SELECT id FROM sessions WHERE session_key = :key", {"key": session_key},
                         dimension=dimension)
    if data.n_records == 0:
        raise CouncilDbError(_no_scores(db, session_key))
    calibration_data, stored = data, None
    if settings.method in NEEDS_WINDOW and not (settings.method is Method.bias_adjusted and settings.offsets):
        stored = load_sample(db, Window(dimension=dimension), sample_sessions)
        calibration_data = stored.data
        if calibration_data.scale != data.scale:
            raise CouncilDbError(f"session {session_key} is scored on {data.scale} but most stored scores are on "
                                 f"{calibration_data.scale}: {settings.method.value} cannot be calibrated for it; "
                                 "use --method mean, weighted or median, or give --offsets")
    calibration = _sampled(calibrate(settings.method, calibration_data, weights=settings.weights,
                                     offsets=settings.offsets, include_self=settings.include_self), stored)
    result = consensus(data, settings.method, calibration, settings.include_self)
    order = sorted(range(len(result)), key=lambda i: -result.score[i])
    rows = [{"rank": place, "model": result.models[result.model[i]],
             "response_length_chars": _chars(int(result.length[i])), "score": float(result.score[i]),
             "reviewers": int(result.n_reviewers[i])}
            for place, i in enumerate(order, start=1)]
    ts = int(data.session_ts_us[0])
    return {"session_id": session_key, "timestamp": format_us(ts) if ts >= 0 else None,
            "method": settings.method.value, "scale": data.scale, **({"dimension": dimension} if dimension else {}),
            "include_self": settings.include_self,
            "calibration": _calibration(settings.method, calibration), "excluded": dict(data.excluded),
            "candidates": rows}


def model_leaderboard(db: Database, window: Window, settings: Settings, *, filters: dict[str, Any],
                      seed: int = 0, n_boot: int = N_BOOT, sample_sessions: int = SAMPLE_SESSIONS) -> dict[str, Any]:
    """Models ranked over the window (above ``sample_sessions`` sessions, over the bias report's
    sample of it): by the joint model's quality (``quality``), or by mean consensus score with
    session-bootstrap CIs; warned when the ranking follows answer length."""
    loaded = load_sample(db, window, sample_sessions)
    data = loaded.data
    if data.n_records == 0:
        from council_db.analysis.loading.empty_window import where_the_data_is

        hint = where_the_data_is(db, window) if data.n_sessions == 0 else None
        raise CouncilDbError(hint or "no usable scores in this window (see council-db stats, or widen the window)")
    fit = joint_model.fit(data) if settings.method not in (Method.ppi, Method.bradley_terry) else None
    tier = confidence_tier(data.n_sessions)
    warnings = unreadable_warnings(data.excluded)
    if loaded.window_sessions is not None:
        warnings.append(f"ranked over {sample_note(loaded)}; --sample-sessions 0 ranks them all")
    if tier == "insufficient":
        warnings.append(f"only {data.n_sessions} sessions (fewer than 10): the ranking is not to be trusted")
    extra: dict[str, Any] = {}
    if settings.method is Method.ppi:
        # PPI reads the people's scores beside the judges': every kind, not the judges' data alone
        everyone = loaded.with_reference if loaded.with_reference is not None else data
        ranking = people_calibrated(everyone, _stored_kinds(db), settings.include_self)
        standings = [found.standing for found in ranking.candidates]
        calibration = _sampled(Calibration(source=_ppi_source(ranking), n_sessions=ranking.labelled_sessions), loaded)
        interval = PPI_INTERVAL
        extra = _ppi_fields(ranking)
    elif settings.method is Method.bradley_terry:
        board = pairwise_board(data, settings.style, settings.baseline, settings.include_self, settings.strong_as_three,
                               seed, min(n_boot, PAIRWISE_BOOT))
        standings, interval = [], board.interval
        calibration = _sampled(Calibration(source=board.source, n_sessions=board.n_sessions, n_records=board.n_games),
                               loaded)
        extra = {"top": board.top, "warnings": board.warnings, "models": board.models, "removes": board.removes}
    elif settings.method is Method.quality:
        standings = quality_standings(data, fit)
        calibration = _sampled(Calibration(source=f"the bias report's joint model over {fit.n_sessions} sessions",
                                           n_sessions=fit.n_sessions, n_records=fit.n_records), loaded)
        interval = INTERVAL
        warnings.extend(fit.warnings)
    else:
        calibration = _sampled(calibrate(settings.method, data, weights=settings.weights, offsets=settings.offsets,
                                         include_self=settings.include_self), loaded)
        standings = leaderboard(consensus(data, settings.method, calibration, settings.include_self), n_boot, seed)
        interval = f"95%, {n_boot} session resamples (seed {seed}), expanded percentile; ranks: 2.5-97.5% quantiles"
    follows_length = length_warning(settings.method, standings, data, fit) if fit is not None else None
    if follows_length:
        warnings.append(follows_length)
    models = extra["models"] if settings.method is Method.bradley_terry else [{"rank": s.rank, "model": s.model,
               "score": {"estimate": _number(s.score.estimate), "ci_low": _number(s.score.ci_low),
                         "ci_high": _number(s.score.ci_high), "n_sessions": s.n_sessions, "n_records": s.n_records},
               "rank_ci_low": s.rank_low, "rank_ci_high": s.rank_high,
               "sessions": s.n_sessions, "answers": s.n_answers, "records": s.n_records,
               **extra.get("models", {}).get(s.model, {})} for s in standings]
    said = extra.pop("removes") if settings.method is Method.bradley_terry \
        else removes(settings.method, settings.include_self)
    return {"method": settings.method.value, "removes": said,
            "window": _window(loaded, window, filters), "confidence": tier,
            "include_self": settings.include_self, "calibration": _calibration(settings.method, calibration),
            "interval": interval, "excluded": dict(data.excluded), **extra.get("top", {}), "models": models,
            "warnings": warnings + extra.get("warnings", [])}


def _stored_kinds(db: Database) -> dict[str, str]:
    """Each stored reviewer's kind: judge, human or gold."""
    from council_db.store.reviewer_kinds import reviewers

    return {row["reviewer"]: row["kind"] for row in reviewers(db)}


def _ppi_source(ranking: Ranking) -> str:
    return f"{ranking.labelled_sessions} sessions {ranking.reference_kind} raters rated " \
           f"({', '.join(ranking.raters)}) beside {ranking.unlabelled_sessions} only judges scored " \
           f"({', '.join(ranking.judges)})"


def _ppi_fields(ranking: Ranking) -> dict[str, Any]:
    """What ``ppi`` adds: per model its lambda, sessions and the estimates beside its own; at the
    top, the reference and the counts; a warning where a candidate has too few labelled sessions."""
    def estimate(found: Estimate) -> dict[str, Any]:
        return {"estimate": _number(found.estimate), "ci_low": _number(found.ci_low),
                "ci_high": _number(found.ci_high), "n_sessions": found.n_sessions,
                **({"p_value": _number(found.p_value)} if found.p_value is not None else {})}

    models = {c.standing.model: {"lambda": _number(c.lam), "labelled_sessions": c.labelled_sessions,
                                 "unlabelled_sessions": c.unlabelled_sessions,
                                 "judge_bias": estimate(c.judge_bias), "judges_only": estimate(c.judges_only),
                                 "labelled_only": estimate(c.labelled_only)} for c in ranking.candidates}
    short = [c.standing.model for c in ranking.candidates if c.labelled_sessions < 2]
    warnings = [f"{len(short)} candidate(s) have fewer than 2 sessions the {ranking.reference_kind} raters rated, "
                f"so no CI: {', '.join(short[:5])}{' ...' if len(short) > 5 else ''}; label more of their sessions"] \
        if short else []
    if not ranking.unlabelled_sessions:
        warnings.append(f"every session the judges scored was rated by the {ranking.reference_kind} raters: the "
                        "ranking is theirs alone, the judges add nothing to it")
    top = {"reference": {"kind": ranking.reference_kind, "raters": ranking.raters, "judges": ranking.judges,
                         "quality": ranking.quality, "labelled_sessions": ranking.labelled_sessions,
                         "unlabelled_sessions": ranking.unlabelled_sessions,
                         "unrated_answers_left_out": ranking.unrated_answers}}
    return {"models": models, "top": top, "warnings": warnings}


def removes(method: Method, include_self: bool) -> str:
    """What ``method`` takes out of the scores, in one line."""
    if method is Method.quality:
        return REMOVES[method]
    return REMOVES[method] + ("; self-reviews kept (self-preference stays in)" if include_self
                              else "; self-reviews left out")


def _sampled(calibration: Calibration, loaded: WindowData | None) -> Calibration:
    """The calibration, its source saying so when it was estimated over a sample of sessions."""
    if loaded is None or loaded.window_sessions is None or calibration.n_sessions is None:
        return calibration
    return replace(calibration, source=f"{calibration.source}, a sample of the window's {loaded.window_sessions:,}")


def _window(loaded: WindowData, window: Window, filters: dict[str, Any]) -> dict[str, Any]:
    """The window ranked, as the bias report states one: the span its analysed sessions fill
    (start, end) and the span asked for (requested...), its counts (and, when they are a
    sample, how many sessions the window holds)."""
    data = loaded.data
    times = data.session_ts_us[data.session_ts_us >= 0]
    sample = {} if loaded.window_sessions is None else \
        {"sample": {"sessions": data.n_sessions, "of": loaded.window_sessions}}
    asked = window.requested()
    return {"start": format_us(int(times.min())) if len(times) else None,
            "end": format_us(int(times.max())) if len(times) else None,
            "sessions": data.n_sessions, "records": data.n_records, "scale": data.scale, "as_of": window.as_of,
            "requested": asked.words, "requested_start": format_us(asked.start_us),
            "requested_end": format_us(asked.end_us), "filters": filters, **sample,
            **({"dimension": window.dimension} if window.dimension else {})}


def _calibration(method: Method, calibration: Calibration) -> dict[str, Any]:
    """What the method used per reviewer, and from how much data."""
    out: dict[str, Any] = {"source": calibration.source, "sessions": calibration.n_sessions,
                           "records": calibration.n_records}
    if method is Method.weighted:
        out["weights"] = calibration.weights
    elif method is Method.bias_adjusted:
        out["offsets"] = calibration.offsets
    elif method is Method.normalized:
        out["means"], out["sds"] = calibration.means, calibration.sds
    return out


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _no_scores(db: Database, session_key: str) -> str:
    from sqlalchemy import text

    with db.engine.connect() as connection:
        known = connection.execute(text("SELECT 1 FROM sessions WHERE session_key = :key"),
                                   {"key": session_key}).first()
    if known is None:
        return f"unknown session {session_key!r}: see council-db sessions for ids"
    return f"session {session_key!r} has no usable scores (all unscored or out of scale: see council-db export " \
           f"--session {session_key})"


def _chars(length: int) -> int | None:
    """An answer's length as records give it: null when unknown."""
    return None if length < 0 else length
