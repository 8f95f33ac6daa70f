"""The report's position section: slot means and effects (joint model), first-shown wins,
swapped pairs, and the same per reviewer, whose tests join the report's one
Benjamini-Hochberg family as one member ("reviewer position"), so that two reviewers
biased in opposite directions are found even when the pooled effect is nil."""

from __future__ import annotations

from typing import Callable

import numpy as np

from council_db.analysis import stats
from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.position.consistency import first_shown_judgments, first_shown_share, presentation_designs
from council_db.analysis.position.reviewer_position import ReviewerPosition as Found
from council_db.analysis.position.reviewer_position import by_reviewer
from council_db.analysis.position.swaps import SwapSummary, summarise, swaps
from council_db.analysis.stats.unique_rows import distinct
from council_db.report.model import (
    BiasReport,
    Consistency,
    Position,
    PositionTest,
    ReviewerPosition,
    SlotMetric,
    SwapConsistency,
)
from council_db.report.p_values import p_value
from council_db.report.scale_bound import beyond_scale

GROUP = "reviewer position"
SLOTS, FIRST_SHOWN = "(display slots)", "(first shown)"
# kind, subject, estimate, p-value, message
Candidate = tuple[str, str, float, float, str]


def position(data: ScoreData, fit, metric: Callable, joint: Callable, warnings: list[str]) -> Position | None:
    """The section, or None without display-slot records; warnings say what was left out.
    ``joint`` makes a joint-model figure whose n counts the records the fit used."""
    shown = data.slot >= 0
    left_out = int((~shown).sum())
    if left_out:
        warnings.append(f"{left_out:,} records left out of the position analysis: their position is not a "
                        "display slot (schema < 1.2.0: the reviewer's ranking; or the line had no position)")
    if not shown.any():
        return None
    slot_means = []
    for slot in distinct(data.slot[shown]):
        here = shown & (data.slot == slot)
        estimate = stats.mean_figure(data.score[here], data.session[here])
        slot_means.append(metric(estimate, int(here.sum()), len(distinct(data.session[here])),
                                 cls=SlotMetric, position=int(slot)))
    slot_effects = [joint(effect, data.slot == slot, cls=SlotMetric, position=int(slot))
                    for slot, effect in sorted(fit.slot_effects.items())]
    judgments = first_shown_judgments(data)
    if judgments.unresolved:
        warnings.append(f"{judgments.unresolved:,} reviewer-sessions show a display slot more than once and are not "
                        "a two-answer swap: which scores were one call cannot be told, so they are left out of "
                        "first-shown wins and swaps (their scores still count in the slot effects)")
    found = swaps(data)
    return Position(records_used=int(shown.sum()), records_left_out=left_out,
                    slot_means=[m for m in slot_means if m is not None],
                    slot_effects=[m for m in slot_effects if m is not None],
                    test=_test(fit.position_test), consistency=_consistency(judgments, metric, warnings),
                    by_reviewer=[_reviewer(row, metric) for row in by_reviewer(data, judgments, found)],
                    swaps=_swaps(summarise(found), metric), designs=presentation_designs(data))


def _test(wald) -> PositionTest | None:
    if wald is None:
        return None
    statistic, df1, df2, p_value = wald
    return PositionTest(statistic=float(statistic), df1=int(df1), df2=int(df2), p_value=float(p_value))


def _consistency(judgments, metric: Callable, warnings: list[str]) -> Consistency | None:
    if judgments.pairs == 0:
        warnings.append("no pair of answers was shown in both orders (one shuffle per session, llm-council's "
                        "default): position consistency needs per-reviewer shuffles")
        return None
    share = first_shown_share(judgments)
    pattern = "none"
    if np.isfinite(share.ci_low) and share.ci_low > 0.5:
        pattern = "primacy"
    elif np.isfinite(share.ci_high) and share.ci_high < 0.5:
        pattern = "recency"
    found = metric(share, len(judgments.first_won), len(np.unique(judgments.session)))
    return None if found is None else Consistency(first_shown_wins=found, pattern=pattern, pairs=judgments.pairs)


def _swaps(summary: SwapSummary | None, metric: Callable) -> SwapConsistency | None:
    if summary is None:
        return None
    flipped = summary.primacy + summary.recency
    consistent = metric(summary.consistent, summary.swaps * 4, summary.consistent.n_sessions)
    if consistent is not None:
        consistent.p_value = None  # a share of consistent pairs has no "no bias" value to test
    return SwapConsistency(swaps=summary.swaps, consistent=consistent, primacy=summary.primacy,
                           recency=summary.recency, one_tie=summary.one_tie,
                           first_preferred=metric(summary.first_preferred, flipped * 4,
                                                  summary.first_preferred.n_sessions))


def _reviewer(row: Found, metric: Callable) -> ReviewerPosition:
    effects = [metric(effect, row.n_records, row.n_sessions, cls=SlotMetric, position=slot)
               for slot, effect in sorted(row.slot_effects.items())]
    first = None if row.first_shown is None else metric(row.first_shown, row.judgments, row.first_shown.n_sessions)
    return ReviewerPosition(reviewer_id=row.reviewer, slot_effects=[e for e in effects if e is not None],
                            test=_test(row.test), first_shown_wins=first, swaps=_swaps(row.swaps, metric))


def candidates(section: Position | None, scale: str, warnings: list[str]) -> list[Candidate]:
    """The per-reviewer tests for the family: all slots equal (unless one reviewer alone has
    display slots: that is the pooled test again) and first-shown wins = 0.5. A slot effect
    larger than the scale is not tested (a warning says so)."""
    if section is None:
        return []
    out: list[Candidate] = []
    for row in section.by_reviewer:
        name = row.reviewer_id
        if row.test is not None and row.slot_effects and len(section.by_reviewer) > 1:
            e = row.slot_effects[0]
            beyond = beyond_scale(e.estimate, scale, f"the position effect of reviewer {name}")
            if beyond is not None:
                warnings.append(beyond)
            else:
                out.append(("position", f"{name} {SLOTS}", e.estimate, row.test.p_value,
                            f"position bias of reviewer {name}: slot {e.position} (shown first) {e.estimate:+.2f} "
                            f"points vs its average slot (95% CI {e.ci_low:+.2f} to {e.ci_high:+.2f}; all its slots "
                            f"equal: p {p_value(row.test.p_value)})"))
        share = row.first_shown_wins
        if share is not None and share.p_value is not None:
            out.append(("position", f"{name} {FIRST_SHOWN}", share.estimate, share.p_value,
                        f"position bias of reviewer {name}: the answer shown first wins {share.estimate:.2f} of "
                        f"{share.n_records:,} decided judgments (95% CI {share.ci_low:.2f} to {share.ci_high:.2f}; "
                        "0.5 = no bias)"))
    return out


def note_disagreement(report: BiasReport) -> None:
    """Say so on the pooled line when flagged reviewers lean in opposite directions."""
    if report.position is None:
        return
    leans: dict[str, set[str]] = {"first": set(), "later": set()}
    for flag in report.flags:
        for suffix, centre in ((SLOTS, 0.0), (FIRST_SHOWN, 0.5)):
            if flag.kind == "position" and flag.subject.endswith(suffix) and flag.estimate != centre:
                leans["first" if flag.estimate > centre else "later"].add(flag.subject.removesuffix(suffix).strip())
    if leans["first"] and leans["later"]:
        first, later = (", ".join(sorted(leans[side])) for side in ("first", "later"))
        report.position.disagreement = (
            f"reviewers disagree in direction: the answer shown first is favoured by {first}, a later one by "
            f"{later}; pooled over reviewers, their biases offset each other")
