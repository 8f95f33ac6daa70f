"""The HTML report's small chart of how each reviewer's severity settled as sessions arrived
(``--method bayes``): its posterior mean after each cut point, one line per reviewer, a dot
where it became stable. Inline SVG, no scripts, on svg's ticks and ink."""

from __future__ import annotations

from html import escape

from council_db.report.hierarchical_model import Hierarchical
from council_db.report.svg import FONT, GRID, INK, REFERENCE, XMLNS, nice_ticks

WIDTH, HEIGHT, LEFT, BOTTOM, TOP, RIGHT = 460, 170, 44, 28, 10, 12
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def severity_paths(part: Hierarchical | None) -> str:
    """The chart, or '' when no reviewer has a severity path."""
    paths = [(r.reviewer_id, r.severity_path, r.stable_since) for r in part.reviewers
             if r.severity_path is not None] if part is not None else []
    if not paths:
        return ""
    sessions = [s for _, path, _ in paths for s in path.sessions]
    values = [v for _, path, _ in paths for v in path.estimate if v is not None] + [0.0]
    first, last, low, high = min(sessions), max(sessions), min(values), max(values)
    pad = max(high - low, 0.2) * 0.1
    low, high = low - pad, high + pad

    def x(session: float) -> float:
        return LEFT + (session - first) / max(last - first, 1) * (WIDTH - LEFT - RIGHT)

    def y(value: float) -> float:
        return TOP + (high - value) / (high - low) * (HEIGHT - TOP - BOTTOM)

    body = [f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="{REFERENCE}" '
            'stroke-dasharray="4 3"/>']
    for tick in nice_ticks(low, high, 4):
        body.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="{GRID}"/>'
                    f'<text x="{LEFT - 4}" y="{y(tick) + 4:.1f}" text-anchor="end" {FONT} fill="{INK}">{tick:+g}</text>')
    for tick in (first, last):
        body.append(f'<text x="{x(tick):.1f}" y="{HEIGHT - 8}" text-anchor="middle" {FONT} fill="{INK}">'
                    f'{tick} sessions</text>')
    legend = []
    for number, (name, path, stable) in enumerate(paths):
        colour = PALETTE[number % len(PALETTE)]
        points = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in zip(path.sessions, path.estimate) if v is not None)
        body.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        if stable is not None and stable in path.sessions:
            at = path.estimate[path.sessions.index(stable)]
            if at is not None:
                body.append(f'<circle cx="{x(stable):.1f}" cy="{y(at):.1f}" r="3" fill="{colour}"/>')
        legend.append(f'<span style="color:{colour}">&#9632;</span> {escape(name)}'
                      + (f" (stable since session {stable})" if stable is not None else ""))
    label = "each reviewer's severity (posterior mean, points vs the average reviewer) as sessions arrived"
    return (f'<svg xmlns="{XMLNS}" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
            f'aria-label="{escape(label)}">{"".join(body)}</svg><p class="note">{"; ".join(legend)}. '
            "A dot: where the severity came within 0.5 prior SD of where it ends and stayed.</p>")
