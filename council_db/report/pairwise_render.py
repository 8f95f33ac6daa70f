"""How the text, Markdown and HTML reports state pairwise data: an effect the design cannot
identify by its label ("not identified (pairwise)"), self-preference as log odds on the pair.
``interval`` is render.interval (passed in: render imports this module)."""

from __future__ import annotations

from typing import Callable

from council_db.report.model import BiasReport, ReviewerProfile


def severity(r: ReviewerProfile, interval: Callable) -> str:
    """A reviewer's severity, or why the design cannot give it."""
    return r.severity_reason or interval(r.severity)


def self_preference(item: BiasReport | ReviewerProfile, interval: Callable) -> str:
    """A reviewer's or the pooled self-preference: log odds on pairwise data, points otherwise."""
    pairs = item.self_preference_on_pairs
    return f"{interval(pairs)} log odds" if pairs is not None else interval(item.self_preference)


def self_preference_line(report: BiasReport, interval: Callable) -> str:
    """The pooled self-preference in words, as the text report's one line states it."""
    pairs = report.self_preference_on_pairs
    if pairs is None:
        return f"{interval(report.self_preference)} points on own answers (joint model, pooled over reviewers)"
    return (f"log odds {interval(pairs)} (odds ratio {pairs.odds_ratio:.2f}) that a judge picks its own answer, "
            f"against third judges on the same pair in the same order ({pairs.pairs:,} pairs, pooled over judges)")


def reviewer_trends(report: BiasReport) -> str:
    """'reviewers (drift of severity): not identified (pairwise)', or '' where they are given."""
    missing = report.not_identified
    return "" if missing is None else f"reviewers (drift of severity): {missing.label}"
