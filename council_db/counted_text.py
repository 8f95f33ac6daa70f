"""A count with its noun, as every command's output states one ('1 session', '1,200
sessions'). Kept apart from the report's renderer so a command that only counts (an import's
summary, a webhook's text) does not load the report to say how many."""

from __future__ import annotations


def counted(n: int, noun: str) -> str:
    """'1 session', '1,200 sessions'."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
