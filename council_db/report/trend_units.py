"""What a trend is stated per, in every renderer and flag alike: points per 30 days, across
the window's span when the window is shorter (a slope per 30 days from 23 minutes of data
read +-1,470 points on a 1-10 scale), and, for a subject whose own data spans less than half
of that unit (a 23-minute grading run beside months of other judgments), across its own span:
a drift is never stated per a span its subject was not observed over."""

from __future__ import annotations

from council_db.report.model import BiasReport, Metric, Trend


def duration(days: float) -> str:
    """A span for people: '23 minutes', '5 hours', '12 days'."""
    if days * 24 < 1:
        return f"{max(round(days * 1440), 1)} minutes"
    if days < 2:
        return f"{round(days * 24)} hours"
    return f"{round(days)} days"


def window_unit(span_days: float | None) -> tuple[str, bool]:
    """The report's unit for a window of ``span_days``, and whether it is the window's span."""
    if span_days is None or span_days >= 30:
        return "points per 30 days", False
    return f"points across the window's {duration(span_days)}", True


def trend_unit(report: BiasReport) -> tuple[str, bool]:
    """The unit of the report's trend table and chart: ``window_unit`` of its window."""
    unit, across_window = window_unit(report.trends[0].span_days if report.trends else None)
    return (f"{unit} (its whole span)" if across_window else unit), across_window


def own_span(span_days: float) -> str:
    """How a subject observed over less than half the unit is stated instead."""
    return f"across its own {duration(span_days)} of data"


def trend_figure(trend: Trend, across_window: bool) -> tuple[Metric | None, str]:
    """The figure a trend's row shows: in the report's unit (``trend_unit``), or, for a subject
    observed over less than half of it, the change across its own span, with the words that
    say so (empty in the report's unit)."""
    if trend.short_span and trend.subject_span_days is not None:
        return trend.change_over_subject_span, own_span(trend.subject_span_days)
    return (trend.change_over_span if across_window else trend.slope_per_30d), ""
