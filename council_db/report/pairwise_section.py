"""The report on designs that fix each reviewer's total in a session (pairwise verdicts,
rankings): the effects that live only in those totals are said to be not identified, in the
JSON (``not_identified``, each reviewer's ``severity_reason``) and in every renderer, instead of
a severity of 0 read as "neutral" or a drift of 0 read as "no trend"."""

from __future__ import annotations

from council_db.report.model import BiasReport, NotIdentified

NOT_IDENTIFIED = ["reviewer severity (harsh or generous)", "reviewer trends and change points (a drift of severity)",
                  "anchoring"]


def not_identified(report: BiasReport, fit) -> None:
    """Say which effects the design leaves unidentified, and why (``fixed_totals``)."""
    fixed = fit.fixed_totals
    if fixed is None:
        return
    report.not_identified = NotIdentified(label=fixed.label, reason=fixed.reason(), effects=list(NOT_IDENTIFIED))
    for profile in report.reviewers:
        if profile.severity is None:
            profile.severity_reason = fixed.label
