"""Small inline-SVG charts for the HTML report: estimates with CIs on a shared axis (a forest
plot) and a time series with a CI band. Plain strings, no scripts, no external references."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta
from html import escape

from council_db.analysis.loading.window import DAY_US
from council_db.contract.timestamps import EPOCH

TICKS = (0.0, 0.5, 1.0)  # where the time axis is labelled: its ends and middle

XMLNS = "http://www.w3.org/2000/svg"
INK = "#333333"
GRID = "#dddddd"
REFERENCE = "#888888"
FONT_PX = 12
FONT = f"font-family=\"system-ui, sans-serif\" font-size=\"{FONT_PX}\""
NARROW = frozenset("ijlI.,:;'|!/\\ ()[]ft-")  # DejaVu Sans Bold: at most 0.46 em
WIDE = frozenset("mwMW@%")  # up to 1.1 em
CJK = 0x2E80  # from here on characters are a full em wide
GAP = 8  # pixels between a column's text and the plot
PLOT_MIN_WIDTH = 170


@dataclass(frozen=True)
class Row:
    """One estimate with its CI; ``strong`` rows (flagged, or a pooled value) are drawn bolder."""

    label: str
    estimate: float
    ci_low: float | None
    ci_high: float | None
    note: str = ""
    strong: bool = False


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high]."""
    if not high > low:
        return [low]
    raw = (high - low) / max(count - 1, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step + 1e-9) + 1)]


def _domain(values: list[float], reference: float | None) -> tuple[float, float]:
    points = values + ([reference] if reference is not None else [])
    low, high = min(points), max(points)
    if high - low < 1e-9:
        low, high = low - 1, high + 1
    pad = (high - low) * 0.08
    return low - pad, high + pad


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (f'<svg xmlns="{XMLNS}" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="{escape(label)}" {FONT}>' + "".join(body) + "</svg>")


def text_width(text: str) -> float:
    """Pixels the browser may give ``text`` at the charts' 12 px: an upper bound for DejaVu Sans
    Bold, the widest common system font. SVG text neither wraps nor reports its width, so the
    layout reserves this much and no label is ever cut."""
    return FONT_PX * sum(0.46 if c in NARROW else 1.1 if c in WIDE or ord(c) >= CJK else
                         0.86 if c.isupper() or not c.isascii() or c in "#+<=>^~&" else 0.72 for c in text)


def label_width(rows: list[Row]) -> float:
    """The label column that holds the longest label, with a gap before the plot."""
    return max([text_width(row.label) for row in rows] + [40.0]) + 2 * GAP


def _value_text(row: Row, digits: int) -> str:
    interval = (f" [{row.ci_low:+.{digits}f}, {row.ci_high:+.{digits}f}]"
                if row.ci_low is not None and row.ci_high is not None else " (no CI)")
    return f"{row.estimate:+.{digits}f}{interval}{' ' + row.note if row.note else ''}"


def forest(rows: list[Row], *, colour: str, axis_label: str, reference: float | None = 0.0,
           digits: int = 2, min_width: int = 560, labels: float | None = None) -> str:
    """Each row: label, a CI line with the estimate as a dot, and the numbers; a dashed line at
    ``reference`` (no effect). The label and number columns are as wide as their longest text
    (``labels`` sets the label column, to align charts), the plot takes the rest of
    ``min_width`` and at least PLOT_MIN_WIDTH."""
    values = [_value_text(row, digits) for row in rows]
    plot_left = labels or label_width(rows)
    value_width = max(text_width(value) for value in values) + 2 * GAP
    plot_right = plot_left + max(PLOT_MIN_WIDTH, min_width - plot_left - value_width)
    width = round(plot_right + value_width)
    top, row_height = 12, 26
    height = top + row_height * len(rows) + 40
    numbers = [v for r in rows for v in (r.estimate, r.ci_low, r.ci_high) if v is not None and math.isfinite(v)]
    low, high = _domain(numbers or [0.0], reference)

    def x(value: float) -> float:
        return plot_left + (value - low) / (high - low) * (plot_right - plot_left)

    bottom = top + row_height * len(rows)
    body = []
    for tick in nice_ticks(low, high):
        body.append(f'<line x1="{x(tick):.1f}" y1="{top}" x2="{x(tick):.1f}" y2="{bottom}" stroke="{GRID}"/>')
        body.append(f'<text x="{x(tick):.1f}" y="{bottom + 15}" text-anchor="middle" fill="{INK}">'
                    f'{tick:g}</text>')
    if reference is not None:
        body.append(f'<line x1="{x(reference):.1f}" y1="{top - 4}" x2="{x(reference):.1f}" y2="{bottom}" '
                    f'stroke="{REFERENCE}" stroke-dasharray="4 3"/>')
    body.append(f'<text x="{(plot_left + plot_right) / 2:.1f}" y="{bottom + 32}" text-anchor="middle" '
                f'fill="{INK}">{escape(axis_label)}</text>')
    for i, (row, value) in enumerate(zip(rows, values)):
        y = top + row_height * i + row_height / 2
        weight = ' font-weight="bold"' if row.strong else ""
        body.append(f'<text x="{plot_left - GAP:.1f}" y="{y + 4:.1f}" text-anchor="end" fill="{INK}"{weight}>'
                    f'{escape(row.label)}</text>')
        if row.ci_low is not None and row.ci_high is not None:
            body.append(f'<line x1="{x(row.ci_low):.1f}" y1="{y:.1f}" x2="{x(row.ci_high):.1f}" y2="{y:.1f}" '
                        f'stroke="{colour}" stroke-width="{4 if row.strong else 3}" stroke-linecap="round"/>')
        body.append(f'<circle cx="{x(row.estimate):.1f}" cy="{y:.1f}" r="{6 if row.strong else 5}" '
                    f'fill="{colour}"/>')
        body.append(f'<text x="{plot_right + GAP:.1f}" y="{y + 4:.1f}" fill="{INK}">{escape(value)}</text>')
    return _svg(width, height, body, axis_label)


@dataclass(frozen=True)
class Band:
    """A stretch of time [start, end) with a mean and its CI (None from a single unit)."""

    start: float
    end: float
    mean: float
    ci_low: float | None
    ci_high: float | None


def time_series(points: list[tuple[float, float]], bands: list[Band], *, colour: str, axis_label: str,
                width: int = 560, height: int = 260) -> str:
    """Points (time in µs, value) as small grey dots; over them each band's mean as a line
    with its CI as a shaded area."""
    left, right, top, bottom = 48, width - 12, 12, height - 42
    times = [t for t, _ in points] + [b.start for b in bands] + [b.end for b in bands]
    values = [v for _, v in points] + [v for b in bands for v in (b.ci_low, b.ci_high) if v is not None]
    t0, t1 = (min(times), max(times)) if times else (0.0, 1.0)
    if t1 <= t0:
        t0, t1 = t0 - 43_200e6, t1 + 43_200e6
    low, high = _domain(values or [0.0], None)

    def x(t: float) -> float:
        return left + (t - t0) / (t1 - t0) * (right - left)

    def y(v: float) -> float:
        return bottom - (v - low) / (high - low) * (bottom - top)

    body = []
    for tick in nice_ticks(low, high):
        body.append(f'<line x1="{left}" y1="{y(tick):.1f}" x2="{right}" y2="{y(tick):.1f}" stroke="{GRID}"/>')
        body.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" fill="{INK}">{tick:g}</text>')
    for fraction, anchor, label in zip(TICKS, ("start", "middle", "end"), time_labels(t0, t1)):
        body.append(f'<text x="{x(t0 + fraction * (t1 - t0)):.1f}" y="{bottom + 16}" text-anchor="{anchor}" '
                    f'fill="{INK}">{label}</text>')
    body.append(f'<text x="{(left + right) / 2:.1f}" y="{bottom + 34}" text-anchor="middle" fill="{INK}">'
                f'{escape(axis_label)}</text>')
    for t, v in points:
        body.append(f'<circle cx="{x(t):.1f}" cy="{y(v):.1f}" r="2" fill="#b0b0b0"/>')
    with_ci = [b for b in bands if b.ci_low is not None and b.ci_high is not None]
    if with_ci:
        upper = " ".join(f"{x((b.start + b.end) / 2):.1f},{y(b.ci_high):.1f}" for b in with_ci)
        lower = " ".join(f"{x((b.start + b.end) / 2):.1f},{y(b.ci_low):.1f}" for b in reversed(with_ci))
        body.append(f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.2"/>')
    if bands:
        line = " ".join(f"{x((b.start + b.end) / 2):.1f},{y(b.mean):.1f}" for b in bands)
        body.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="3"/>')
        for b in bands:
            body.append(f'<circle cx="{x((b.start + b.end) / 2):.1f}" cy="{y(b.mean):.1f}" r="4" fill="{colour}"/>')
    return _svg(width, height, body, axis_label)


def time_labels(t0: float, t1: float) -> list[str]:
    """The time axis's labels at TICKS of [t0, t1] (µs): dates, or over less than 3 days the
    time too (to the second under 3 minutes), the date written once where all share it."""
    moments = [EPOCH + timedelta(microseconds=int(t0 + fraction * (t1 - t0))) for fraction in TICKS]
    if t1 - t0 >= 3 * DAY_US:
        return [moment.strftime("%Y-%m-%d") for moment in moments]
    clock = "%H:%M:%S" if t1 - t0 < 180e6 else "%H:%M"
    one_day = len({moment.date() for moment in moments}) == 1
    return [moment.strftime(clock if one_day and number else f"%Y-%m-%d {clock}")
            for number, moment in enumerate(moments)]

