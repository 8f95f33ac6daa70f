"""How the text, Markdown and HTML reports state pairwise data: an effect the design cannot
identify by its label ("not identified (pairwise)"), self-preference as log odds on the pair,
position and length as the pairwise model's odds.
``interval`` is render.interval (passed in: render imports this module)."""

from __future__ import annotations

from html import escape
from typing import Callable

from council_db.markdown_text import markdown_text
from council_db.report.model import BiasReport, ReviewerProfile
from council_db.report.p_values import p_value
from council_db.report.pairwise_model import OddsMetric


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


def odds_lines(report: BiasReport) -> list[str]:
    """The pairwise model's first-shown and length odds, one line each, then what they are
    net of and how they relate to the position section's raw share; none off pairwise data."""
    model = report.pairwise_model
    if model is None:
        return []
    rows = model.first_shown + ([model.length] if model.length is not None else [])
    return ([f"Bradley-Terry ({model.outcome_model}) over {model.games:,} games in {model.sessions:,} sessions"]
            + [f"{odds.name}: {_odds(odds)}" for odds in rows]
            + [f"net of {model.adjusts_for}", f"vs the raw share: {model.relation}"])


def odds_text(report: BiasReport) -> list[str]:
    """The text report's PAIRWISE MODEL section (after POSITION)."""
    lines = odds_lines(report)
    return ["", f"PAIRWISE MODEL  {lines[0]}"] + [f"  {line}" for line in lines[1:]] if lines else []


def odds_markdown(report: BiasReport) -> list[str]:
    """The Markdown report's "Pairwise model" section."""
    lines = odds_lines(report)
    return ["", "## Pairwise model", ""] + [f"- {markdown_text(line)}" for line in lines] if lines else []


def _odds(odds: OddsMetric) -> str:
    """'odds ratio 1.67 (95% CI 0.70 to 5.11), log odds +0.51, p 0.242, 25 games, 13 sessions'."""
    ratio = "n/a" if odds.odds_ratio is None else f"{odds.odds_ratio:.2f}"
    interval = "" if odds.odds_ratio_ci_low is None or odds.odds_ratio_ci_high is None \
        else f" (95% CI {odds.odds_ratio_ci_low:.2f} to {odds.odds_ratio_ci_high:.2f})"
    return (f"odds ratio {ratio}{interval}, log odds {odds.estimate:+.2f}, p {p_value(odds.p_value)}, "
            f"{odds.n_records:,} games, {odds.n_sessions:,} sessions")


def odds_html(report: BiasReport) -> str:
    """The HTML report's "Pairwise model" section."""
    lines = odds_lines(report)
    if not lines:
        return ""
    return f"<h2>Pairwise model</h2><p>{escape(lines[0])}</p><ul>" \
        + "".join(f"<li>{escape(line)}</li>" for line in lines[1:]) + "</ul>"
