"""`council-db diff` as text, Markdown (a pull request's comment) or JSON. Every figure is
printed with its 95% CI and n, under the window it was read from; both renderings are built
from the same rows, so they cannot say different things."""

from __future__ import annotations

import json
import math
from typing import Any

from council_db.analysis.stats.estimate import Estimate
from council_db.contract.timestamps import format_us
from council_db.markdown_text import markdown_text
from council_db.report.contract_base import Metric
from council_db.report.diffs import ItemsDiff, WindowsDiff
from council_db.report.figure_changes import ALPHA
from council_db.report.model import ReportWindow
from council_db.report.p_values import p_value
from council_db.terminal_text import terminal_text

Figure = Estimate | Metric


def _number(value: float | None, signed: bool) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def _figure(figure: Figure | None, signed: bool = True) -> str:
    """'+0.52 [+0.41, +0.63]', or the estimate alone when there is no interval."""
    if figure is None or figure.estimate is None:
        return "n/a"
    low, high = figure.ci_low, figure.ci_high
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return f"{_number(figure.estimate, signed)} [no CI]"
    return f"{_number(figure.estimate, signed)} [{_number(low, signed)}, {_number(high, signed)}]"


def _interval(estimate: Figure | None) -> dict[str, Any] | None:
    if estimate is None:
        return None
    clean = [None if v is None or not math.isfinite(v) else v for v in (estimate.estimate, estimate.ci_low,
                                                                        estimate.ci_high)]
    return {"estimate": clean[0], "ci_low": clean[1], "ci_high": clean[2], "n_sessions": estimate.n_sessions}


def _q(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _verdict(changed: bool) -> str:
    return ("changed: at least one figure moved beyond its CI (q <= 0.05)" if changed
            else "no change beyond the CIs (no figure at q <= 0.05)")


# ---- two sides on the same items

def _items_header(diff: ItemsDiff) -> list[str]:
    sides, figures = diff.sides, diff.figures
    span = (f"from {format_us(sides.first_ts_us)} to {format_us(sides.last_ts_us)}"
            if sides.first_ts_us is not None else "no session time")
    return [f"{sides.first} against {sides.second} (differences: the second minus the first)",
             f"window asked: {diff.window}",
             f"window read: {sides.sessions:,} sessions {span}" + (f" ({sides.sample})" if sides.sample else ""),
             f"items both scored: {figures.items:,} in {figures.clusters:,} clusters "
             f"({sides.items.only_first:,} only the first scored, {sides.items.only_second:,} only the second)",
             f"verdict: {sides.items.verdict}"]


def _items_rows(diff: ItemsDiff) -> list[list[str]]:
    f = diff.figures
    return [["flip rate (verdicts)", _figure(f.flip_rate, False), f"{f.items:,}", ""],
            ["mean difference (points)", _figure(f.mean_difference), f"{f.items:,}", p_value(_q(f.overall_q))],
            ["Cohen's kappa (verdicts)", _figure(f.kappa), f"{f.items:,}", ""],
            ["weighted kappa (scores, quadratic)", _figure(f.weighted_kappa), f"{f.items:,}", ""]]


def _candidate_rows(diff: ItemsDiff) -> list[list[str]]:
    return [[shift.candidate, _figure(shift.difference), f"{shift.items:,}", p_value(_q(shift.q_value))]
            for shift in diff.figures.candidates]


# ---- two windows' reports

def _window_line(name: str, window: ReportWindow) -> str:
    return (f"{name}: {window.sessions:,} sessions, {window.records:,} records from {window.start} to {window.end}"
            f" ({window.requested})")


def _windows_header(diff: WindowsDiff) -> list[str]:
    return ["the bias report before the change against the report after it (differences: after minus before)",
            _window_line("before", diff.before), _window_line("after", diff.after),
            f"{len(diff.changes)} figures compared; q: Benjamini-Yekutieli over all of them"]


def _change_rows(diff: WindowsDiff) -> list[list[str]]:
    return [[change.figure, _figure(change.before), _figure(change.after),
             f"{_number(change.difference, True)} [{_number(change.ci_low, True)}, {_number(change.ci_high, True)}]",
             p_value(_q(change.q_value)), "CHANGED" if change.changed() else ""] for change in diff.changes]


# ---- the formats

def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def _sections(diff: ItemsDiff | WindowsDiff) -> tuple[list[str], list[tuple[str, list[str], list[list[str]]]]]:
    """The header lines and the titled tables, shared by text and Markdown."""
    if isinstance(diff, ItemsDiff):
        return _items_header(diff), [
            ("SAME ITEMS  (95% CI resampling clusters; q: BH over the mean and the candidates)",
             ["figure", "estimate [95% CI]", "items", "q"], _items_rows(diff)),
            ("CANDIDATES  paired difference, largest first (95% CI clustered)",
             ["candidate", "difference [95% CI]", "items", "q"], _candidate_rows(diff))]
    return _windows_header(diff), [
        ("FIGURES  most changed first", ["figure", "before", "after", "change [95% CI]", "q", ""],
         _change_rows(diff))]


def _packed(chunks: list[str], width: int, indent: str) -> list[str]:
    """``chunks`` joined by two spaces into lines of at most ``width``, never cut inside one."""
    lines = [indent]
    for chunk in chunks:
        if lines[-1].strip() and len(lines[-1]) + 2 + len(chunk) > width:
            lines.append(indent)
        lines[-1] += ("  " if lines[-1].strip() else "") + chunk
    return lines


def _stacked(columns: list[str], rows: list[list[str]], width: int) -> list[str]:
    """A table too wide for ``width``: each row's first cell on a line, its other cells (each
    named by its column) packed under it."""
    lines = []
    for row in rows:
        cells = [f"{name} {cell}" if name else cell for name, cell in zip(columns[1:], row[1:]) if cell]
        lines += ["  " + row[0], *_packed(cells, width, "    ")]
    return lines


def _table(columns: list[str], rows: list[list[str]], width: int | None) -> list[str]:
    if not rows:
        return ["  none"]
    aligned = _aligned([columns, *rows])
    if width is None or max(map(len, aligned)) <= width:
        return aligned
    return _stacked(columns, rows, width)


def text(diff: ItemsDiff | WindowsDiff, width: int | None = None) -> str:
    """The diff for people; given a ``width`` (a terminal's), every line fits it."""
    from council_db.report.text_layout import fitted

    header, tables = _sections(diff)
    lines = ["council-db diff", *header, ""]
    for title, columns, rows in tables:
        lines += [title, *_table(columns, rows, width), ""]
    if isinstance(diff, WindowsDiff) and diff.unmatched:
        lines += [f"only in one window (not compared): {', '.join(diff.unmatched)}", ""]
    lines.append(_verdict(diff.changed()))
    if width is not None:
        lines = [part for line in lines for part in (fitted(line, width) if line else [line])]
    return "\n".join(terminal_text(line) for line in lines) + "\n"


def markdown(diff: ItemsDiff | WindowsDiff) -> str:
    header, tables = _sections(diff)
    lines = ["## council-db diff", "", *(f"- {markdown_text(line)}" for line in header), ""]
    for title, columns, rows in tables:
        lines += [f"### {markdown_text(title)}", ""]
        if not rows:
            lines += ["none", ""]
            continue
        lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join(markdown_text(cell) for cell in row) + " |" for row in rows]
        lines.append("")
    if isinstance(diff, WindowsDiff) and diff.unmatched:
        lines += [f"Only in one window (not compared): {markdown_text(', '.join(diff.unmatched))}", ""]
    lines.append(f"**{_verdict(diff.changed())}**")
    return "\n".join(lines) + "\n"


def _items_json(diff: ItemsDiff) -> dict[str, Any]:
    sides, f = diff.sides, diff.figures
    return {"kind": "items", "first": sides.first, "second": sides.second,
            "window": {"requested": diff.window, "sessions": sides.sessions, "sample": sides.sample,
                       "start": format_us(sides.first_ts_us) if sides.first_ts_us is not None else None,
                       "end": format_us(sides.last_ts_us) if sides.last_ts_us is not None else None},
            "verdict": sides.items.verdict, "items": f.items, "clusters": f.clusters,
            "only_first": sides.items.only_first, "only_second": sides.items.only_second,
            "flip_rate": _interval(f.flip_rate), "mean_difference": {**_interval(f.mean_difference),
                                                                     "q_value": _q(f.overall_q)},
            "kappa": _interval(f.kappa), "weighted_kappa": _interval(f.weighted_kappa),
            "candidates": [{"candidate": s.candidate, "items": s.items, "difference": _interval(s.difference),
                            "p_value": _q(s.difference.p_value), "q_value": _q(s.q_value)}
                           for s in f.candidates]}


def _windows_json(diff: WindowsDiff) -> dict[str, Any]:
    import msgspec

    return {"kind": "windows", "before": msgspec.to_builtins(diff.before),
            "after": msgspec.to_builtins(diff.after),
            "figures": [{"figure": c.figure, "before": _interval(c.before), "after": _interval(c.after),
                         "difference": _q(c.difference), "ci_low": _q(c.ci_low), "ci_high": _q(c.ci_high),
                         "p_value": _q(c.p_value), "q_value": _q(c.q_value), "changed": c.changed()}
                        for c in diff.changes],
            "unmatched": diff.unmatched}


def as_json(diff: ItemsDiff | WindowsDiff) -> str:
    body = _items_json(diff) if isinstance(diff, ItemsDiff) else _windows_json(diff)
    return json.dumps({**body, "alpha": ALPHA, "changed": diff.changed()}, indent=2) + "\n"
