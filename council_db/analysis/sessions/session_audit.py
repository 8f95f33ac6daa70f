"""`council-db audit SESSION_ID`: ADR-015's per-session indicators, computed honestly.

One session has 4-5 answers: these numbers are indicators, never evidence. p-values use
the t distribution (r = 0.8 at n = 5 is p ~ 0.10, not 0.02), every variance says how it
is defined, and nothing here raises a flag: flags come from the cross-session report.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, Field

from council_db.analysis.effects.length import answer_table
from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.loading.window import load_sessions
from council_db.analysis.position.consistency import presentation_designs
from council_db.analysis.stats import AnswerTable, correlation_p_value
from council_db.contract.timestamps import format_us
from council_db.errors import CouncilDbError
from council_db.markdown_text import markdown_text
from council_db.store.database import Database
from council_db.terminal_text import terminal_text


class LengthIndicator(BaseModel):
    r: float | None = Field(description="Pearson r of answer length (chars) and the answer's mean score")
    p_value: float | None = Field(description="two-sided, t distribution with n - 2 df")
    answers: int


class SlotIndicator(BaseModel):
    position: int
    mean: float
    records: int


class PositionIndicator(BaseModel):
    slot_means: list[SlotIndicator]
    variance_of_slot_means: float | None = Field(description="population variance (ddof=0) of the slot "
                                                             "means, as llm-council's per-session audit has it")
    note: str


class ReviewerIndicator(BaseModel):
    reviewer_id: str
    scores: int
    mean: float
    sd: float | None = Field(description="sample SD (ddof=1) of its scores in this session")
    z: float | None = Field(description="(mean - median of reviewer means) / SD of reviewer means (ddof=1)")
    self_score_minus_others: float | None = Field(
        description="its score of its own answer minus the other reviewers' mean score of that answer")


class SessionAudit(BaseModel):
    session_id: str
    timestamp: str | None
    records: int
    answers: int
    reviewers: list[ReviewerIndicator]
    length: LengthIndicator
    position: PositionIndicator | None
    notes: list[str]


def audit(db: Database, session_key: str) -> SessionAudit:
    data = load_sessions(db, "SELECT id FROM sessions WHERE session_key = :key", {"key": session_key})
    if data.n_records == 0:
        raise CouncilDbError(f"no usable scores for session {session_key!r} (see council-db sessions for ids)")
    return audit_data(data)


def audit_data(data: ScoreData) -> SessionAudit:
    # ADR-015 averages every reviewer's score of an answer, its author's included.
    answers = answer_table(data, include_self=True)
    notes = [f"{len(answers.mean_score)} answers: these are indicators, not evidence; bias shows only across "
             "sessions (council-db bias-report)."]
    reviewers = len(np.unique(data.reviewer))
    if reviewers > 2:  # with two the SD of two means says nothing and z is not given
        notes.append(f"with {reviewers} reviewers a z (distance from the median reviewer mean, in SDs of "
                     f"the reviewer means) can never exceed {median_z_bound(reviewers):.2f} in size: "
                     "a z threshold is not a test")
    return SessionAudit(
        session_id=data.session_keys[0],
        timestamp=format_us(int(data.session_ts_us[0])) if data.session_ts_us[0] >= 0 else None,
        records=data.n_records,
        answers=len(answers.mean_score),
        reviewers=_reviewers(data),
        length=_length(answers),
        position=_position(data, notes),
        notes=notes + [f"{count:,} records left out: {reason}" for reason, count in data.excluded.items()],
    )


def median_z_bound(n: int) -> float:
    """The largest |z| that (value - median) / SD (ddof=1) can reach over n >= 3 values:
    sqrt((n-1)(h+2)/(h+1)), h = n // 2 (2.00 at n = 4; about the mean it would be
    (n-1)/sqrt(n) = 1.50). Reached with one value far out, the lower half and the median at
    the median, and the other upper-half values where they make the SD smallest. A z
    threshold above it can never fire, whatever the reviewers do."""
    half = n // 2
    return math.sqrt((n - 1) * (half + 2) / (half + 1))


def _length(answers: AnswerTable) -> LengthIndicator:
    lengths, means = answers.length, answers.mean_score
    n = len(means)
    if n < 3 or np.std(lengths) == 0 or np.std(means) == 0:
        return LengthIndicator(r=None, p_value=None, answers=n)
    r = float(np.corrcoef(lengths, means)[0, 1])
    return LengthIndicator(r=r, p_value=float(correlation_p_value(r, n)), answers=n)


def _position(data: ScoreData, notes: list[str]) -> PositionIndicator | None:
    shown = data.slot >= 0
    if not shown.any():
        notes.append("positions in this session are rankings, not display slots (schema < 1.2.0)")
        return None
    slots = np.unique(data.slot[shown])
    means = [SlotIndicator(position=int(s), mean=float(data.score[shown & (data.slot == s)].mean()),
                           records=int((shown & (data.slot == s)).sum())) for s in slots]
    variance = float(np.var([m.mean for m in means])) if len(means) > 1 else None
    return PositionIndicator(slot_means=means, variance_of_slot_means=variance, note=_slot_note(data))


def _slot_note(data: ScoreData) -> str:
    """What a slot mean can say depends on whether every reviewer saw one order."""
    if "one_shuffle" in presentation_designs(data):
        return ("with one shuffle per session each slot holds one answer, so a slot's mean is also that "
                "answer's quality: position cannot be told from quality here")
    return ("orders differ between reviewers here, so each slot mixes answers; with one session's few "
            "scores a slot mean is still an indicator, not a test")


def _reviewers(data: ScoreData) -> list[ReviewerIndicator]:
    means = {r: float(data.score[data.reviewer == r].mean()) for r in np.unique(data.reviewer)}
    values = list(means.values())
    median, spread = float(np.median(values)), float(np.std(values, ddof=1)) if len(values) > 2 else math.nan
    out = []
    for number, mean in means.items():
        mine = data.reviewer == number
        scores = data.score[mine]
        out.append(ReviewerIndicator(
            reviewer_id=data.reviewers[number], scores=int(mine.sum()), mean=mean,
            sd=float(np.std(scores, ddof=1)) if len(scores) > 1 else None,
            z=(mean - median) / spread if spread and not math.isnan(spread) else None,
            self_score_minus_others=_self_minus_others(data, number),
        ))
    return out


def _self_minus_others(data: ScoreData, reviewer: int) -> float | None:
    own = (data.reviewer == reviewer) & data.self_review
    if not own.any():
        return None
    answer = data.model[own][0]
    others = (data.model == answer) & (data.reviewer != reviewer)
    return float(data.score[own].mean() - data.score[others].mean()) if others.any() else None


def markdown(report: SessionAudit) -> str:
    """The text page as Markdown: a heading, then its lines as a list (notes indented beneath),
    every character Markdown would read as markup escaped (ids are data)."""
    head, *lines = (markdown_text(line) for line in text(report).splitlines())
    items = [f"  - {line.strip()}" if line.startswith("  ") else f"- {line}" for line in lines]
    return f"## Session audit\n\n{head}\n\n" + "\n".join(items) + "\n"


def text(report: SessionAudit) -> str:
    lines = [f"session {report.session_id} ({report.timestamp or 'no timestamp'}): {report.records:,} scores of "
             f"{report.answers:,} answers — INDICATORS ONLY"]
    length = report.length
    r = "n/a" if length.r is None else f"{length.r:+.2f}"
    p = "n/a" if length.p_value is None else f"{length.p_value:.3f}"
    lines.append(f"length vs mean score: r = {r} over {length.answers:,} answers, p = {p} (t distribution, "
                 f"{max(0, length.answers - 2):,} df)")
    if report.position is not None:
        slots = ", ".join(f"slot {s.position}: {s.mean:.2f}" for s in report.position.slot_means)
        variance = report.position.variance_of_slot_means
        lines.append(f"slot means: {slots}; variance of slot means (ddof=0) "
                     f"{'n/a' if variance is None else f'{variance:.3f}'}")
        lines.append(f"  {report.position.note}")
    lines.append("reviewers (mean, sample SD, z vs the median reviewer, own answer minus others' scores of it):")
    for rv in report.reviewers:
        sd = "n/a" if rv.sd is None else f"{rv.sd:.2f}"
        z = "n/a" if rv.z is None else f"{rv.z:+.2f}"
        own = "n/a" if rv.self_score_minus_others is None else f"{rv.self_score_minus_others:+.2f}"
        lines.append(f"  {rv.reviewer_id}: n={rv.scores:,} mean={rv.mean:.2f} sd={sd} z={z} self-minus-others={own}")
    lines += [f"note: {note}" for note in report.notes]
    return "".join(f"{terminal_text(line)}\n" for line in lines)
