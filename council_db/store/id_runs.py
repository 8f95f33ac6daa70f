"""Integer ids as runs of consecutive values, so that a set of ids becomes a few range queries."""

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
