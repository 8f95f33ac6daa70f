"""Which of the bias report's figures changed between two windows (before and after a change):
each figure's difference (after minus before) with its own 95% CI and z test, and
Benjamini-Yekutieli q-values across every figure both reports give, so a report of dozens of
figures does not find a change by chance. Yekutieli, not Hochberg: the figures depend on each
other, some negatively (severities relative to their average sum to zero), where
Benjamini-Hochberg's guarantee does not hold: on 200 simulated sets with nothing planted it
called 5.5% (95% CI 3.1-9.6%) of them changed (benchmarks/bench_diff.py).

The two windows hold different sessions, so their estimates are independent: the difference's
SE is sqrt(SE_before^2 + SE_after^2), each SE read from its 95% CI as (high - low) / (2 x 1.96)
(exact for the report's t and normal intervals, an approximation for its bootstrap ones).
The figures compared are the ones a judge upgrade moves: each reviewer's severity and
self-preference, each candidate's quality, the slot effects (pooled and per reviewer), the
length effect and Krippendorff's alpha. Severity, quality and slot effects are relative to
their average, so one reviewer shifting by X moves its own severity by X (R - 1) / R and every
other reviewer's by -X / R.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

from council_db.analysis.stats.inference import benjamini_yekutieli, normal_p_value, normal_quantile
from council_db.report.contract_base import Metric
from council_db.report.model import BiasReport

ALPHA = 0.05
Z95 = normal_quantile(0.95)


@dataclass(frozen=True)
class FigureChange:
    figure: str  # e.g. "severity openai/gpt-4o", "slot 0 effect (reviewer x)"
    before: Metric
    after: Metric
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    q_value: float

    def changed(self, alpha: float = ALPHA) -> bool:
        return self.q_value <= alpha


def figures(report: BiasReport) -> Iterator[tuple[str, Metric | None]]:
    """The report's comparable figures, each named so the same figure of another window matches."""
    for reviewer in report.reviewers:
        yield f"severity {reviewer.reviewer_id}", reviewer.severity
        yield f"self-preference {reviewer.reviewer_id}", reviewer.self_preference
    for model in report.models:
        yield f"quality {model.model_id}", model.quality
    if report.position is not None:
        for slot in report.position.slot_effects:
            yield f"slot {slot.position} effect", slot
        for by in report.position.by_reviewer:
            for slot in by.slot_effects:
                yield f"slot {slot.position} effect {by.reviewer_id}", slot
    if report.length is not None:
        yield "length effect (points per SD of log length)", report.length.adjusted_effect
        yield "length correlation (within session)", report.length.headline
    yield "self-preference (pooled)", report.self_preference
    yield "agreement (Krippendorff's alpha)", report.agreement


def _se(metric: Metric) -> float:
    if metric.estimate is None or metric.ci_low is None or metric.ci_high is None:
        return math.nan
    return (metric.ci_high - metric.ci_low) / (2.0 * Z95)


def compare_reports(before: BiasReport, after: BiasReport) -> tuple[list[FigureChange], list[str]]:
    """Every figure both reports give with a CI, its change and BY q (largest |z| first), and
    the names of the figures only one window could give (a reviewer that appears, say)."""
    old = {name: metric for name, metric in figures(before) if metric is not None and math.isfinite(_se(metric))}
    new = {name: metric for name, metric in figures(after) if metric is not None and math.isfinite(_se(metric))}
    names = [name for name in new if name in old]
    rows = []
    for name in names:
        a, b = old[name], new[name]
        difference, se = b.estimate - a.estimate, math.hypot(_se(a), _se(b))
        p = float(normal_p_value(difference / se)) if se > 0 else math.nan
        rows.append((name, a, b, difference, se, p))
    q = benjamini_yekutieli([row[5] for row in rows]) if rows else []
    changes = [FigureChange(name, a, b, d, d - Z95 * se, d + Z95 * se, p, float(q_value))
               for (name, a, b, d, se, p), q_value in zip(rows, q)]
    changes.sort(key=lambda c: c.p_value if math.isfinite(c.p_value) else 2.0)
    unmatched = sorted(set(old) ^ set(new))
    return changes, unmatched
