"""The text report laid out for a terminal: 80 columns unless --wide. Tables keyed by a name
(a reviewer, a model, a session) put each row on one line where every row fits, else each
name on a line of its own with its figures under it; a line still too wide is cut at spaces,
its continuation indented under its text. Every line is escaped for the terminal
(``terminal_text``): a stored id can neither drive the terminal nor forge a line."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Iterable

from council_db.terminal_text import terminal_text

if TYPE_CHECKING:
    from council_db.report.model import Metric

WIDTH = 80  # the text report's width unless --wide: a terminal's default
BAR_WIDTH = 25  # a CI chart's cells where there is room
MIN_BAR = 8  # fewer cells cannot show an interval beside its zero


class Page:
    """The report's lines, ``width`` columns wide; None: each table whole and each line as
    long as it is (--wide)."""

    def __init__(self, width: int | None) -> None:
        self.width = width
        self.lines: list[str] = []

    @property
    def wide(self) -> bool:
        return self.width is None

    def add(self, line: str) -> None:
        self.lines.append(terminal_text(line))

    def rows(self, rows: list[tuple[str, str]], indent: int, after: list[list[str]] | None = None) -> None:
        """``(name, figures)`` rows as ``keyed`` lays them out, each followed by its lines in ``after``."""
        for number, lines in enumerate(keyed(rows, indent, self.width)):
            for line in [*lines, *(after[number] if after else [])]:
                self.add(line)

    def bar(self, used: int) -> int:
        """The cells of a CI chart on a line whose other text takes ``used`` columns."""
        return BAR_WIDTH if self.width is None else max(MIN_BAR, min(BAR_WIDTH, self.width - used))

    def text(self) -> str:
        lines = self.lines if self.width is None else [part for line in self.lines for part in fitted(line, self.width)]
        return "".join(f"{line.rstrip()}\n" for line in lines)


def names_fit(names: list[str], indent: int, figures: int, width: int | None, gap: int = 2) -> bool:
    """Whether ``names``, padded to one column, and ``figures`` columns fit on one line."""
    column = max((len(terminal_text(name)) for name in names), default=0)
    return width is None or indent + column + gap + figures <= width


def keyed(rows: list[tuple[str, str]], indent: int, width: int | None, gap: int = 2) -> list[list[str]]:
    """Each ``(name, figures)`` row's lines: the names padded to one column when every row
    fits ``width``, else each name on a line of its own with its figures under it, 2 deeper."""
    names = [terminal_text(name) for name, _ in rows]
    margin = " " * indent
    if names_fit(names, indent, max((len(figures) for _, figures in rows), default=0), width, gap):
        column = max((len(name) for name in names), default=0)
        return [[f"{margin}{name:<{column}}{' ' * gap}{figures}".rstrip()] for name, (_, figures) in zip(names, rows)]
    return [[f"{margin}{name}", f"{margin}  {figures}".rstrip()] for name, (_, figures) in zip(names, rows)]


def aligned(rows: list[list[str]], gap: int = 2) -> list[str]:
    """Rows of cells as lines of text, each cell but the last padded to its column's width."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))] if rows else []
    return [(" " * gap).join([*(f"{cell:<{w}}" for cell, w in zip(row[:-1], widths)), row[-1]]) for row in rows]


def fitted(line: str, width: int) -> list[str]:
    """``line`` as it fits ``width``: cut at spaces (a word longer than the line cut too),
    continuations 2 deeper than the line's own indent, under the text after a flag's "! "."""
    if len(line) <= width:
        return [line]
    under = len(line) - len(line.lstrip(" ")) + 2
    return textwrap.wrap(line, width, subsequent_indent=" " * min(under, width // 2), break_on_hyphens=False)


def ci_bar(metric: Metric | None, low: float, high: float, width: int = BAR_WIDTH) -> str:
    """A one-line picture of an estimate and its CI on the axis [low, high], zero marked."""
    if metric is None or metric.estimate is None or metric.ci_low is None or high <= low:
        return " " * width
    cells = [" "] * width

    def at(value: float) -> int:
        return min(width - 1, max(0, round((value - low) / (high - low) * (width - 1))))

    if low < 0 < high:
        cells[at(0.0)] = "│"
    start, end = at(metric.ci_low), at(metric.ci_high)
    for i in range(start, end + 1):
        cells[i] = "─"
    cells[start], cells[end] = "├", "┤"
    cells[at(metric.estimate)] = "●"
    return "".join(cells)


def axis(metrics: Iterable[Metric | None]) -> tuple[float, float]:
    """A symmetric axis around zero wide enough for every CI."""
    edges = [abs(v) for m in metrics if m is not None for v in (m.ci_low, m.ci_high, m.estimate) if v is not None]
    top = max(edges, default=1.0) or 1.0
    return -top, top
