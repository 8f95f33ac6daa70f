"""Confidence tiers by session count (ADR-018): how much a reader should trust any number."""

from __future__ import annotations

TIERS = ("insufficient", "preliminary", "moderate", "high")


def confidence_tier(n_sessions: int) -> str:
    """ADR-018's tier for this many sessions: "insufficient" (< 10), "preliminary" (10-19),
    "moderate" (20-49), "high" (>= 50). Sessions, not records: records within a session are
    not independent, so they do not add confidence the way sessions do."""
    if n_sessions < 10:
        return "insufficient"
    if n_sessions < 20:
        return "preliminary"
    if n_sessions < 50:
        return "moderate"
    return "high"
