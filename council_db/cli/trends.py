"""council-db trends and council-db anomalies: drift over time and sessions that do not fit."""

from __future__ import annotations

import math
from enum import Enum
from typing import Annotated, Any, Optional

import typer

from council_db.cli.context import message, state
from council_db.cli.formats import (
    LISTING,
    REPORT,
    Csv,
    Json,
    Lines,
    Output,
    Wide,
    chosen,
    destination,
    format_option,
    output_option,
    wrote,
)
from council_db.cli.window_options import (
    SAMPLE_SESSIONS,
    AsOf,
    Categories,
    Configs,
    Days,
    Dimension,
    Models,
    Reviewers,
    SampleSessions,
    Sessions,
    Since,
    Until,
    checked_window,
)

TRENDS = (*REPORT, "csv")  # csv: the rolling series
TrendsFormat = Annotated[Optional[str], format_option(
    *TRENDS, help="text (three tables), json, markdown, html, or csv (the rolling series); default text, or as "
                  "-o's suffix says.")]
ListingFormat = Annotated[Optional[str], format_option(*LISTING)]

MIN_SESSIONS = 10
PER_UNIT = ("slope_per_30d", "ci_low", "ci_high", "change_over_span")  # not shown for a subject observed too briefly
EVERY_US = {"1d": 86_400_000_000, "7d": 7 * 86_400_000_000, "30d": 30 * 86_400_000_000}
MONDAY_US = 4 * 86_400_000_000  # 1970-01-01 was a Thursday: weeks start on Mondays


class By(str, Enum):
    reviewer = "reviewer"
    model = "model"


class Every(str, Enum):
    day = "1d"
    week = "7d"
    month = "30d"


def _load(ctx: typer.Context, sample_sessions: int, say_sample: bool = True, **options: Any):
    """The window, its scores (above ``sample_sessions`` sessions, a sample's: said on stderr
    unless not ``say_sample``) and the joint model's fit, or a usage error for a bad time."""
    from council_db.analysis.joint import joint_model
    from council_db.analysis.loading.window import load_sample, sample_note, unreadable_warnings
    from council_db.errors import CouncilDbError

    spec = checked_window(**options)
    db = state(ctx).database(read_only=True)
    loaded = load_sample(db, spec, sample_sessions)
    data, note = loaded.data, sample_note(loaded)
    for warning in unreadable_warnings(data.excluded):
        message(f"warning: {warning}")
    if note and say_sample:
        message(f"note: {note}; --sample-sessions 0 reads them all")
    if data.n_sessions == 0:
        from council_db.analysis.loading.empty_window import where_the_data_is

        hint = where_the_data_is(db, spec)
        if hint:
            raise CouncilDbError(hint)
    if data.n_sessions < MIN_SESSIONS:
        raise CouncilDbError(f"only {data.n_sessions} sessions in this window: time analyses need at least "
                             f"{MIN_SESSIONS}; import more or widen the window")
    return db, spec, loaded, joint_model.fit(data)


def trends(
    ctx: typer.Context,
    by: Annotated[By, typer.Option("--by", help="Trends per reviewer or per candidate model.")] = By.reviewer,
    every: Annotated[Every, typer.Option("--every", help="Period of the rolling series: 1d, 7d or 30d.")] = Every.week,
    sessions: Sessions = None, days: Days = None, since: Since = None, until: Until = None, as_of: AsOf = None,
    reviewer: Reviewers = None, model: Models = None, config_version: Configs = None, category: Categories = None,
    dimension: Dimension = None,
    sample_sessions: SampleSessions = SAMPLE_SESSIONS, fmt: TrendsFormat = None, as_json: Json = False,
    as_csv: Csv = False, output: Annotated[Optional[str], output_option(*TRENDS)] = None, wide: Wide = False,
) -> None:
    """Drift over time: slopes, change points, rolling series.

    On joint-model residuals: slope per 30 days, change points, rolling series. Slopes are
    relative to the typical other subject, with 95% CIs clustered by instant; change points
    are calibrated by permutation; q-values are Benjamini-Hochberg over the slopes and
    change searches shown. Also: severity per council_config_version and per model-id
    version."""
    import numpy as np

    from council_db.analysis import stats
    from council_db.analysis.drift import changepoints, panel, version_drift
    from council_db.analysis.drift import trends as trend_analysis

    fmt = chosen(TRENDS, fmt, json=as_json, csv=as_csv, output=output)
    db, _, loaded, fit = _load(ctx, sample_sessions, sessions=sessions, days=days, since=since, until=until,
                               as_of=as_of, reviewer=reviewer, model=model, config_version=config_version,
                               category=category, dimension=dimension)
    data = loaded.data
    timed = trend_analysis.timed_residuals(data, fit.residuals, by.value)
    slopes = trend_analysis.slopes(timed)
    changes = {c.subject: c for c in changepoints.search(timed, np.random.default_rng(0))}
    q = stats.benjamini_hochberg([s.p_value for s in slopes] + [c.p_value for c in changes.values()])
    slope_q = dict(zip((s.subject for s in slopes), q[:len(slopes)]))
    change_q = dict(zip(changes, q[len(slopes):]))
    rows = [_trend_row(s, slope_q[s.subject], changes.get(s.subject), change_q.get(s.subject), timed.span_us)
            for s in slopes]
    flagged = {s: c for s, c in changes.items() if change_q[s] <= 0.05}
    series = _series(trend_analysis.at_floor(timed), EVERY_US[every.value], flagged)  # a wide panel's: those tested
    versions = version_drift.load_config_versions(db, data)
    drift = []
    if by is By.reviewer:
        drift = [_version_row(v) for v in version_drift.config_version_severities(data, versions)
                 + version_drift.model_id_severities(data, fit.severity)]
    warnings = version_drift.mixed_version_warnings(data, versions) + panel.changes(data) + trend_analysis.alone(timed)
    warnings += [note for note in [trend_analysis.floor_note(timed)] if note]
    warnings += [s.one_instant_note() for s in slopes if s.one_instant]
    untested = changepoints.why_not_tested(timed)
    if untested is not None:
        warnings.append(untested)
    if not slopes:
        warnings.append(f"no trend: it needs at least two {by.value}s with scores at {trend_analysis.MIN_TIMES} or "
                        "more distinct times (a drift shared by all cannot be told from a change in the questions)")
    sample = {} if loaded.window_sessions is None else \
        {"sample": {"sessions": data.n_sessions, "of": loaded.window_sessions}}
    result = {"by": by.value, "every": every.value, "sessions": data.n_sessions, "records": data.n_records, **sample,
              **({"dimension": dimension} if dimension else {}), "trends": rows, "series": series,
              "drift_by_version": drift, "warnings": warnings}
    with destination(output) as out:
        _write_trends(result, fmt, out, wide)
    wrote(output, fmt, len(rows), "trend")
    for warning in warnings:
        message(f"warning: {warning}")


def _write_trends(result: dict[str, Any], fmt: str, out, wide: bool) -> None:
    """The trends in ``fmt``: JSON whole; csv the series; text, Markdown and HTML its tables."""
    import json

    from council_db.cli.output import emit_rows
    from council_db.report import tables
    from council_db.report.trend_units import window_unit

    by, every = result["by"], result["every"]
    common = [row for row in result["trends"] if not row["short_span"]]
    own = [{key: value for key, value in row.items() if key not in PER_UNIT}
           for row in result["trends"] if row["short_span"]]
    unit, _ = window_unit(result["trends"][0]["span_days"] if result["trends"] else None)
    named = f", dimension: {result['dimension']}" if "dimension" in result else ""
    titled = [(f"trends per {by} ({unit} vs the typical other {by}), {result['sessions']:,} sessions{named}",
               common, _trends_for_people),
              (f"{by}s observed over less than half of that: points across each one's own span",
               own, _own_span_for_people),
              ("adjusted severity by version", result["drift_by_version"], _drift_for_people),
              (f"rolling series of mean residuals, every {every}", result["series"], _series_for_people)]
    titled = [table for table in titled if table[1] or table[2] is _trends_for_people]
    documented = [(title, rows) for title, rows, _ in titled]
    if fmt == "json":
        out.write(json.dumps(result, indent=2, default=str) + "\n")
    elif fmt == "csv":
        emit_rows(result["series"], "csv", out=out)
    elif fmt == "markdown":
        out.write(tables.markdown(f"Trends per {by}{named}", documented, result["warnings"]))
    elif fmt == "html":
        out.write(tables.html_page(f"Trends per {by}{named}", documented, result["warnings"]))
    else:
        for title, rows, shown in titled:
            emit_rows(rows if wide else [shown(row) for row in rows], "table", title=title, out=out)


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def _trends_for_people(row: dict[str, Any]) -> dict[str, Any]:
    """A trend as an 80-column table shows it (--wide and the other formats: every column):
    per 30 days, or across the window's span when that is shorter."""
    from council_db.report.trend_units import window_unit

    _, across_window = window_unit(row["span_days"])
    if not across_window:
        figure = {"slope/30d": f"{row['slope_per_30d']:+.3f}", "95% CI": _interval(row["ci_low"], row["ci_high"])}
    else:
        scale = row["span_days"] / 30
        figure = {"change": f"{row['change_over_span']:+.3f}",
                  "95% CI": _interval(row["ci_low"] * scale, row["ci_high"] * scale)}
    return {"subject": row["subject"], **figure, "q": _q(row["q_value"]), "change at": (row["change_at"] or "")[:10]}


def _own_span_for_people(row: dict[str, Any]) -> dict[str, Any]:
    """A subject observed over less than half the unit: the change across its own span."""
    from council_db.report.trend_units import duration

    return {"subject": row["subject"], "change": f"{row['change_over_subject_span']:+.3f}",
            "95% CI": _interval(row["change_over_subject_span_ci_low"], row["change_over_subject_span_ci_high"]),
            "over": duration(row["subject_span_days"]), "q": _q(row["q_value"]),
            "change at": (row["change_at"] or "")[:10]}


def _q(q_value: float | None) -> str:
    return "untested" if q_value is None else f"{q_value:.2g}"


def _drift_for_people(row: dict[str, Any]) -> dict[str, Any]:
    severity = row["severity"]
    return {"reviewer": row["reviewer"], "version": row["version"],
            "severity": "" if severity is None else f"{severity:+.3f}",
            "95% CI": _interval(row["ci_low"], row["ci_high"]), "sessions": row["n_sessions"]}


def _series_for_people(row: dict[str, Any]) -> dict[str, Any]:
    return {"subject": row["subject"], "period": row["period_start"][:10], "n": row["sessions"],
            "mean": f"{row['mean_residual']:+.3f}", "rolling": f"{row['rolling_mean']:+.3f}",
            "change": "yes" if row["change_point"] else ""}


def _trend_row(slope, q_value: float, change, change_q: float | None, span_us: int) -> dict[str, Any]:
    from council_db.analysis.drift.trends import DAY_US
    from council_db.contract.timestamps import format_us

    flagged = change is not None and change_q is not None and change_q <= 0.05
    own = slope.over(slope.span_us)
    tested = not math.isnan(slope.p_value)  # a slope resting on one instant is shown, not tested
    return {
        "subject": slope.subject, "slope_per_30d": slope.estimate, "ci_low": slope.ci_low, "ci_high": slope.ci_high,
        "p_value": slope.p_value if tested else None, "q_value": float(q_value) if tested else None,
        "n_sessions": slope.n_sessions,
        "n_records": slope.n_records, "span_days": span_us / DAY_US,
        "change_over_span": slope.over(span_us).estimate,
        "subject_span_days": slope.span_us / DAY_US, "short_span": slope.short_span(span_us),
        "change_over_subject_span": own.estimate, "change_over_subject_span_ci_low": own.ci_low,
        "change_over_subject_span_ci_high": own.ci_high,
        "change_p_value": None if change is None else change.p_value,
        "change_q_value": None if change_q is None else float(change_q),
        "change_at": format_us(change.at_us) if flagged else None,
        "change_shift": change.shift if flagged else None,
    }


def _version_row(v) -> dict[str, Any]:
    effect = v.effect
    known = effect is not None and effect.identified
    return {"reviewer": v.reviewer, "version_kind": v.version_kind, "version": v.version,
            "severity": effect.estimate if known else None, "ci_low": effect.ci_low if known else None,
            "ci_high": effect.ci_high if known else None, "n_sessions": v.sessions, "n_records": v.records}


def _series(timed, every_us: int, changes: dict) -> list[dict[str, Any]]:
    """Per subject and period, via sql/trend_series.sql (window functions) on an in-memory
    SQLite table of the residuals: works the same whichever database holds the scores."""
    import sqlite3

    import numpy as np

    from council_db.contract.timestamps import MIN_US, format_us
    from council_db.resources import read_sql

    offset = MONDAY_US if every_us == EVERY_US["7d"] else 0
    period = np.maximum((timed.ts_us - offset) // every_us * every_us + offset, MIN_US)  # none starts before year 1
    names = [timed.names[s] for s in timed.subject.tolist()]
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE TABLE residuals (subject TEXT, period_us INTEGER, session INTEGER, residual REAL)")
        connection.executemany("INSERT INTO residuals VALUES (?, ?, ?, ?)",
                               zip(names, period.tolist(), timed.session.tolist(), timed.residual.tolist()))
        rows = connection.execute(read_sql("trend_series")).fetchall()
    finally:
        connection.close()
    change_period = {s: (c.at_us - offset) // every_us * every_us + offset for s, c in changes.items()}
    return [{"subject": subject, "period_start": format_us(start), "sessions": n_sessions, "records": records,
             "mean_residual": mean, "rolling_mean": rolling, "cusum": cusum,
             "change_point": change_period.get(subject) == start}
            for subject, start, n_sessions, records, mean, rolling, cusum in rows]


def anomalies(
    ctx: typer.Context,
    sessions: Sessions = None, days: Days = None, since: Since = None, until: Until = None, as_of: AsOf = None,
    reviewer: Reviewers = None, model: Models = None, config_version: Configs = None, category: Categories = None,
    dimension: Dimension = None,
    show_all: Annotated[bool, typer.Option("--all", help="List every session tested, not only the flagged.")] = False,
    every: Annotated[bool, typer.Option(
        "--every-session", help="Above --sample-sessions, test every session of the window against the sample's "
                                "fit, in one pass over the store (about 40 CPU seconds at a million sessions; "
                                "8 and 290 MB once `council-db db pack` packed its records).")] = False,
    sample_sessions: SampleSessions = SAMPLE_SESSIONS, fmt: ListingFormat = None, as_json: Json = False,
    nl: Lines = False, as_csv: Csv = False, output: Output = None, wide: Wide = False,
) -> None:
    """Sessions whose scores do not fit the others.

    All the same (extreme) score, or one reviewer far off. A p-value per session, calibrated
    against the other sessions; flagged at Benjamini-Hochberg q <= 0.05 over the sessions
    tested (above --sample-sessions, a sample's, or with --every-session every session's)."""
    import numpy as np

    from council_db.analysis import stats
    from council_db.analysis.sessions import anomalies as detect
    from council_db.analysis.sessions.screen import screen
    from council_db.cli.output import emit_rows
    from council_db.cli.table_view import for_people
    from council_db.contract.timestamps import format_us

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    db, spec, loaded, fit = _load(ctx, sample_sessions, False, sessions=sessions, days=days, since=since,
                                  until=until, as_of=as_of, reviewer=reviewer, model=model,
                                  config_version=config_version, category=category, dimension=dimension)
    screened = screen(db, spec, loaded, fit, every)
    if loaded.window_sessions is not None:
        message(f"note: {screened.note()}; --sample-sessions 0 reads every record")
    tested = screened.tested()
    if not len(tested):
        message(f"warning: anomalies need at least {detect.MIN_SESSIONS} sessions with {detect.MIN_RECORDS} or more "
                "scores")
    q_values = stats.benjamini_hochberg(screened.tests.p_value[tested]) if len(tested) else np.zeros(0)
    shown = [i for i, q in enumerate(q_values) if show_all or q <= detect.FDR]
    rows = [{"session_id": a.session_id, "timestamp": format_us(ts) if ts >= 0 else None,
             "p_value": a.p_value, "q_value": float(q_values[i]), "flagged": bool(q_values[i] <= detect.FDR),
             "reason": a.reason}
            for i, (a, ts) in zip(shown, screened.described([int(tested[i]) for i in shown]))]
    rows.sort(key=lambda r: r["p_value"])
    if dimension:  # every row says which scores it was found in, as the title does
        rows = [{**row, "dimension": dimension} for row in rows]
    sampled = "" if screened.every_session else f" (a sample of the window's {screened.window_sessions:,})"
    sampled += f", dimension: {dimension}" if dimension else ""
    columns = None
    if fmt == "table" and not wide:
        rows = for_people(db, rows)
        columns = ["session_id", "timestamp", "p_value", "q_value", *(["flagged"] if show_all else []), "reason"]
    with destination(output) as out:
        written = emit_rows(rows, fmt, title=f"anomalous sessions (q <= {detect.FDR}) of {len(tested):,} tested"
                            f"{sampled}", out=out, columns=columns)
    wrote(output, fmt, written, "session")
