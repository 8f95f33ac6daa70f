"""CSV rows whose quoted fields hold line breaks, kept whole through the line machinery.

The import reads files as lines (ingest/lines.py), in batches, segments and slices cut at
newlines. A CSV row may run over several lines inside a quoted field (a judge's explanation
often does), and a row cut in two reads as two broken rows. Inside a quoted field the count
of quote characters so far is odd (RFC 4180 doubles a quote within a field), so a row ends at
the first newline where the count is even. Here such a row's lines are joined into the
element of its first line, and each line it swallowed becomes an empty element: line numbers
stay those of the file, and a batch never ends inside a row (an open row moves to the next
batch). A CSV's last row without its newline is held for the next import, as a JSON line's
is, when the file may still be being written: a score cut short ("1" of "10") would read as
a good row. A quote that never closes would hold the rest of the file: after MAX_ROW_LINES lines
its row is let go as it stands (the reader rejects it) and counting starts again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator

from council_db.ingest.lines import LineBatch, read_batches

if TYPE_CHECKING:
    from council_db.ingest.sources import Source

QUOTE = b'"'
MAX_ROW_LINES = 10_000


def whole_rows(batches: Iterable[LineBatch], hold_open: bool = False) -> Iterator[LineBatch]:
    """The batches with every row whole in one element, line numbers and offsets kept.
    ``hold_open``: the file may still grow, so a row still open at its end may be one being
    written: it is left for the next import (the offsets stop before it), as a last line
    without its newline is (ingest/lines.py)."""
    held: list[bytes] = []  # the lines of a row still open at the end of the last batch
    held_from = end = 0
    for batch in batches:
        first = held_from if held else batch.first_line
        lines = held + batch.lines
        rows, open_at = joined_rows(lines)
        if open_at is None:
            held = []
        else:
            held, held_from = lines[open_at:], first + open_at
            rows = rows[:open_at]
        end = batch.end_offset - sum(len(line) + 1 for line in held)
        if rows:
            yield LineBatch(first, rows, end)
    if held and not hold_open:  # the file ends inside a quoted field: the row goes as it is
        yield LineBatch(held_from, held, end + sum(len(line) + 1 for line in held))


def joined_rows(lines: list[bytes]) -> tuple[list[bytes], int | None]:
    """The lines with each row that runs over several joined into its first (the others
    empty), and where a row still open at the end starts (None when none is)."""
    odd = [line.count(QUOTE) & 1 for line in lines]
    if not any(odd):
        return lines, None
    rows = list(lines)
    start = None
    for index, flips in enumerate(odd):
        if start is not None and index - start >= MAX_ROW_LINES:
            start = None  # a quote that never closed: its row is let go, counting starts again here
        if not flips:
            continue
        if start is None:
            start = index
            continue
        rows[start] = b"\n".join(lines[start:index + 1])
        rows[start + 1:index + 1] = [b""] * (index - start)
        start = None
    return rows, start


def row_cuts(source: Source, start: int, end: int, every: int) -> list[int]:
    """Offsets in [start, end) where a row begins, about ``every`` bytes apart (``start``
    first): where a file can be cut into segments for worker processes."""
    cuts = [start]
    with source.path.open("rb") as handle:
        handle.seek(start)
        for batch in whole_rows(read_batches(handle, offset=start, length=end - start, keep_partial_tail=False)):
            if batch.end_offset - cuts[-1] >= every and batch.end_offset < end:
                cuts.append(batch.end_offset)
    return cuts
