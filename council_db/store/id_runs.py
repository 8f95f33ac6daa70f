"""Integer ids as runs of consecutive values, so that a set of ids becomes a few range queries,
and an id span cut into ranges that threads read at once."""

from __future__ import annotations

from typing import Iterable


def id_runs(ids: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted ids as (first, last) runs of consecutive integers."""
    runs: list[tuple[int, int]] = []
    for value in sorted(set(ids)):
        if runs and value == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], value)
        else:
            runs.append((value, value))
    return runs


def id_ranges(first_id: int | None, last_id: int | None, parts: int) -> list[tuple[int, int]]:
    """``first_id..last_id`` cut into at most ``parts`` contiguous ranges of about equal size."""
    if first_id is None or last_id is None:
        return [(0, -1)]
    size = -(-(last_id - first_id + 1) // parts)
    return [(start, min(start + size - 1, last_id)) for start in range(first_id, last_id + 1, size)]
