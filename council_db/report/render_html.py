"""The bias report as one self-contained HTML page: inline SVG charts and inline CSS, no
scripts and no external references, so it opens offline and can be mailed or archived.

Each chart is a function returning a Chart; ``charts`` lists them in page order, so adding a
chart is one function and one line there.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

from council_db.analysis.drift.session_means import Series
from council_db.report import hierarchical_render, pairwise_render, reference_render, stability_render, svg
from council_db.report.model import BiasReport, Metric
from council_db.report.p_values import flag_line, p_value
from council_db.report.render import found, interval, recent_severity
from council_db.report.trend_units import duration, trend_figure, trend_unit

# One colour per chart, so a screenshot shows which charts were drawn.
COLOURS = {
    "severity": "#1f77b4",
    "position": "#ff7f0e",
    "length": "#2ca02c",
    "self_preference": "#9467bd",
    "quality": "#8c564b",
    "trends": "#e377c2",
    "session_means": "#17becf",
}

CSS = """
body { font-family: system-ui, sans-serif; color: #222; margin: 24px; background: #ffffff; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 0 0 4px; }
.window, .note { color: #555; font-size: 13px; margin: 0 0 8px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 16px; }
.chart { border: 1px solid #e4e4e4; border-radius: 6px; padding: 12px; min-width: 0; }
.chart svg { max-width: 100%; height: auto; }
.flags li { color: #a40000; } .missing { color: #777; font-style: italic; }
details { margin: 0 0 12px; } summary { cursor: pointer; font-weight: 600; }
"""


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    note: str
    svg: str  # empty when there is nothing to draw; the note says why


def html(report: BiasReport, series: Series) -> str:
    """The whole page."""
    return page(report, charts(report, series))


def charts(report: BiasReport, series: Series) -> list[Chart]:
    return [severity_chart(report), position_chart(report), length_chart(report), self_preference_chart(report),
            quality_chart(report), trends_chart(report), session_means_chart(series, report)]


def _row(label: str, metric: Metric | None, strong: bool = False, note: str = "") -> svg.Row | None:
    if metric is None or metric.estimate is None:
        return None
    return svg.Row(label, metric.estimate, metric.ci_low, metric.ci_high, note=note, strong=strong)


def _rows(pairs) -> list[svg.Row]:
    return [row for row in (_row(*pair) for pair in pairs) if row is not None]


def _sample(metrics: list[Metric | None]) -> str:
    present = [m for m in metrics if m is not None]
    if not present:
        return ""
    sessions = max(m.n_sessions for m in present)
    return f"{sessions:,} sessions; 95% CIs; confidence {present[0].confidence}."


def severity_chart(report: BiasReport) -> Chart:
    if report.not_identified is not None:
        return Chart("severity", "Reviewer severity", _unidentified(report, "Reviewer severity"), "")
    flagged = {f.subject for f in report.flags if f.kind == "reviewer_severity"}
    rows = _rows((r.reviewer_id, r.severity, r.reviewer_id in flagged,
                  " ".join(filter(None, (r.classification if r.reviewer_id in flagged else "",
                                         "drifts" if r.severity_drifts else ""))))
                 for r in report.reviewers)
    note = ("Score points relative to the average reviewer (joint model), averaged over the window; negative = "
            f"harsh. Bold = flagged at q <= 0.05. {_sample([r.severity for r in report.reviewers])}")
    note += "".join(f" {r.reviewer_id}'s severity drifts (trend flagged): {recent_severity(r)}."
                    for r in report.reviewers if r.severity_drifts)
    return _chart("severity", "Reviewer severity", note, rows, "points vs the average reviewer")


def _unidentified(report: BiasReport, what: str) -> str:
    """'Reviewer severity: not identified (pairwise): every reviewer's scores ...'."""
    found = report.not_identified
    return f"{what}: {found.label}: {found.reason}." if found is not None else ""


def position_chart(report: BiasReport) -> Chart:
    position = report.position
    effects = position.slot_effects if position else []
    rows = _rows((f"slot {s.position}" + (" (shown first)" if s.position == 0 else ""), s) for s in effects)
    flagged = {f.subject.rsplit(" (", 1)[0] for f in report.flags if f.kind == "position"}
    rows += _rows((f"{r.reviewer_id}: slot {r.slot_effects[0].position}", r.slot_effects[0], r.reviewer_id in flagged)
                  for r in (position.by_reviewer if position else []) if r.slot_effects)
    note = "Score points relative to the average display slot (joint model); per reviewer, its first slot " \
           "from its own scores (bold = flagged at q <= 0.05)."
    if position is not None and position.test is not None:
        note += f" All slots equal: F({position.test.df1}, {position.test.df2}) = {position.test.statistic:.2f}, " \
                f"p {p_value(position.test.p_value)}."
    if position is not None and position.disagreement:
        note += f" {position.disagreement[0].upper()}{position.disagreement[1:]}."
    return _chart("position", "Slot effects", f"{note} {_sample(list(effects))}", rows, "points vs the average slot")


def length_chart(report: BiasReport) -> Chart:
    length = report.length
    if length is None:
        return Chart("length", "Length effect", "Not estimated (see warnings).", "")
    rows = _rows([("within-session r (headline)", length.headline, True),
                  ("naive pooled r (llm-council)", length.naive_pooled_r),
                  ("meta: fixed-effect r", length.fixed_effect_r),
                  ("meta: random-effects r", length.random_effects_r)])
    adjusted = _rows([("joint model, within model", length.adjusted_effect, True)]
                     + [(r.reviewer_id, r.length_effect) for r in report.reviewers])
    note = ("Correlation of log answer length and score: the headline within sessions with a CI from resampling "
            "whole sessions; the naive pooled r is llm-council's method and its CI is far too narrow. Below: the "
            "joint model's effect in score points per SD of log length within candidate model: the mean of the "
            f"reviewers' own (the flag's), then each reviewer's. {_sample([length.headline])}")
    if length.disagreement:
        note += f" Note: {length.disagreement}."
    drawn, labels = "", svg.label_width(rows + adjusted)  # one label column: the two panels align
    if rows:
        drawn += svg.forest(rows, colour=COLOURS["length"], axis_label="correlation r", labels=labels)
    if adjusted:
        drawn += svg.forest(adjusted, colour=COLOURS["length"], axis_label="points per SD of log length",
                            labels=labels)
    return Chart("length", "Length effect", note, drawn)


def self_preference_chart(report: BiasReport) -> Chart:
    if report.self_preference_on_pairs is not None:
        rows = _rows([("pooled", report.self_preference_on_pairs, True)]
                     + [(r.reviewer_id, r.self_preference_on_pairs) for r in report.reviewers])
        note = ("Log odds that a judge picks its own answer, against third judges' verdicts on the same pair in the "
                f"same order (Mantel-Haenszel over pairs). {_sample([report.self_preference_on_pairs])}")
        return _chart("self_preference", "Self-preference", note, rows, "log odds ratio, own answer winning")
    rows = _rows([("pooled", report.self_preference, True)]
                 + [(r.reviewer_id, r.self_preference) for r in report.reviewers])
    note = ("Score points a reviewer gives its own answers beyond what other reviewers give the same answers, "
            f"adjusted for its severity. {_sample([report.self_preference])}")
    return _chart("self_preference", "Self-preference", note, rows, "points on own answers")


def quality_chart(report: BiasReport) -> Chart:
    rows = _rows((m.model_id, m.quality) for m in report.models)
    note = ("Score points a candidate's answers get relative to the average candidate (joint model: after "
            "reviewer severity, slot, length and self-preference). How good the answers are, not a bias: no "
            f"flags. {_sample([m.quality for m in report.models])}")
    return _chart("quality", "Candidate quality", note, rows, "points vs the average candidate")


def trends_chart(report: BiasReport) -> Chart:
    """Slopes on one axis in the report's unit; a subject observed over less than half of it
    apart, as the change across its own span (on the common axis, its slope per unit would be
    an extrapolation, +-1,000 points wide, squeezing every other row to a dot)."""
    unit, across_window = trend_unit(report)
    flagged = {f.subject for f in report.flags if f.kind == "trend"}

    def rows(short: bool) -> list[svg.Row]:
        return _rows((f"{t.kind} {t.subject}" + (f" ({duration(t.subject_span_days)})" if short else ""),
                      trend_figure(t, across_window)[0],
                      f"{t.kind} {t.subject}" in flagged, "changes" if t.change_points else "")
                     for t in report.trends if t.short_span == short)

    common, own = rows(False), rows(True)
    changes = "".join(f" {t.kind} {t.subject} changes from {c.at} ({c.shift:+.2f} points, q {p_value(c.q_value)})."
                      for t in report.trends for c in t.change_points)
    note = (f"Joint-model residuals over time, per reviewer and per candidate: {unit} vs the typical other "
            f"subject. Bold = flagged at q <= 0.05.{changes} "
            f"{_sample([t.slope_per_30d for t in report.trends])}")
    if report.not_identified is not None:
        note += " " + _unidentified(report, "Reviewer trends (a drift of severity)")
    if own:
        note += (" Below: subjects whose own data spans less than half of that unit, as the change across their "
                 "own span (given beside each), not extrapolated to the unit.")
    if not common and not own:
        return Chart("trends", "Trends", "Not estimated (see warnings).", "")
    drawn, labels = "", svg.label_width(common + own)
    if common:
        drawn += svg.forest(common, colour=COLOURS["trends"], axis_label=unit, labels=labels)
    if own:
        drawn += svg.forest(own, colour=COLOURS["trends"], axis_label="points across each subject's own span",
                            labels=labels)
    return Chart("trends", "Trends", note, drawn)


def session_means_chart(series: Series, report: BiasReport) -> Chart:
    note = (f"Grey: each dated session's mean score ({len(series.sessions):,} sessions). Line: the mean over "
            f"{len(series.stretches)} equal stretches of time with its 95% CI (sessions as units; none from a "
            f"single session). Raw scores on scale {report.window.scale}, not adjusted for who took part.")
    if not series.sessions:
        return Chart("session_means", "Session mean scores over time", "No dated sessions to draw.", "")
    bands = [svg.Band(s.start_us, s.end_us, s.mean, s.ci_low, s.ci_high) for s in series.stretches]
    drawn = svg.time_series([(p.ts_us, p.mean) for p in series.sessions], bands, colour=COLOURS["session_means"],
                            axis_label="session time (UTC)")
    return Chart("session_means", "Session mean scores over time", note, drawn)


def _chart(key: str, title: str, note: str, rows: list[svg.Row], axis_label: str) -> Chart:
    if not rows:
        return Chart(key, title, "Not estimated (see warnings).", "")
    return Chart(key, title, note, svg.forest(rows, colour=COLOURS[key], axis_label=axis_label))


def options(filters: dict[str, Any]) -> str:
    """The window's filters as the options that ask for them: '--days 30 --reviewer a/b'."""
    words = []
    for name, value in filters.items():
        if name == "exclude_anomalies":
            words.append(f"--exclude-anomalies ({value:,} left out)")
            continue
        for one in value if isinstance(value, list) else [value]:
            words.append(f"--{name.replace('_', '-')} {f'{one:,g}' if isinstance(one, float) else one}")
    return " ".join(words)


def page(report: BiasReport, drawn: list[Chart]) -> str:
    w = report.window
    window = ((f"Asked: {escape(w.requested)}. " if w.requested else "")
              + f"Found: {escape(found(w))}, {w.records:,} records, scale {escape(w.scale)}"
              + (f", as of {escape(w.as_of)}" if w.as_of else "")
              + (f", options {escape(options(w.filters))}" if w.filters else "")
              + f". Confidence: {report.confidence}. Generated {escape(report.generated_at)}.")
    sections = "".join(
        f'<section class="chart" id="{c.key}"><h2>{escape(c.title)}</h2><p class="note">{escape(c.note)}</p>'
        + (c.svg or '<p class="missing">Nothing to draw.</p>') + "</section>"
        for c in drawn)
    summary = (f"<p>Self-preference (pooled) {escape(pairwise_render.self_preference(report, interval))}; agreement "
               f"(Krippendorff's alpha) {escape(interval(report.agreement, signed=False))}.</p>")
    warnings = "".join(f"<li>{escape(text)}</li>" for text in report.warnings)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>council-db bias report</title>"
            f"<style>{CSS}</style></head><body>"
            f"<h1>council-db bias report</h1><p class=\"window\">{window}</p>"
            f"<h2>Flags</h2>{flags(report)}{anomalies(report)}{summary}{pairwise_render.odds_html(report)}"
            f"{reference_render.html(report, interval)}{stability_render.html(report.self_consistency, interval)}"
            f"{hierarchical_render.html(report.hierarchical or None, interval)}"
            f'<div class="grid">{sections}</div>'
            + (f"<h2>Warnings</h2><ul>{warnings}</ul>" if warnings else "")
            + "</body></html>\n")


def flags(report: BiasReport) -> str:
    """Every flag but the anomalous sessions (listed apart), with p and q as the text report has them."""
    items = "".join(f"<li>{escape(flag_line(f))}</li>" for f in report.flags if f.kind != "anomaly")
    if items:
        return f'<ul class="flags">{items}</ul>'
    return "<p>No flags: nothing stands out at q &lt;= 0.05 (Benjamini-Hochberg over all tests).</p>"


def anomalies(report: BiasReport) -> str:
    """Anomalous sessions folded under one heading with their count: there can be dozens."""
    if not report.anomalies:
        return "<p>Anomalous sessions: none at q &lt;= 0.05.</p>"
    items = "".join(f"<li>{escape(a.session_id)}: {escape(a.reason)} (p {escape(p_value(a.p_value))}, "
                    f"q {escape(p_value(a.q_value))})</li>" for a in report.anomalies)
    return (f"<details><summary>Anomalous sessions: {len(report.anomalies):,} at q &lt;= 0.05 "
            f"(bias-report --exclude-anomalies leaves them out)</summary><ul>{items}</ul></details>")
