"""Which sessions each of a sampled report's figures rests on (contract 1.9.0): a report over
more sessions than its sample reads every session for some figures (the whole-window sums),
the stratified sample for those conditional on a subject, and the hash-based part of the
sample alone for those that describe the window as a whole (docs/methods.md, "Stratified
sample")."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from council_db.report.contract_base import Contract

Source = Annotated[Literal["every_session", "sample", "hash_sample"], Meta(description=(
    "every_session: every session of the window (per-session sums); sample: the stratified sample (its "
    "hash-based part plus each subject's further sessions), for figures conditional on their reviewer, "
    "candidate or session; hash_sample: the hash-based part alone, a simple random sample of sessions, for "
    "figures pooled over the window"
))]


class FigureSources(Contract, kw_only=True):
    counts: Annotated[Source, Meta(description="window.sessions, records, span and excluded")]
    length: Annotated[Source, Meta(description="the length correlations")]
    agreement: Source
    reviewers: Annotated[Source, Meta(description="reviewers[]: raw mean, severity, self-preference, position")]
    models: Source
    position: Annotated[Source, Meta(description="the slot effects and position tests (joint model)")]
    self_preference: Annotated[Source, Meta(description="the pooled self-preference (joint model)")]
    trends: Annotated[Source, Meta(description="trends, change points and recent severity, per subject")]
    anomalies: Annotated[Source, Meta(description="anomalous sessions, each tested against the joint model")]
    pairs: Annotated[Source, Meta(description="affinity, anchoring, self-consistency and the pairwise models")]


def figure_sources(every_session_totals: bool, stratified: bool) -> FigureSources:
    """Where each figure of a sampled report comes from: counts and length from every session
    when the whole-window sums were read; pooled figures from the hash sample when the
    stratification added sessions (else it is the whole sample)."""
    whole = "every_session" if every_session_totals else ("hash_sample" if stratified else "sample")
    pooled = "hash_sample" if stratified else "sample"
    return FigureSources(counts="every_session" if every_session_totals else "sample", length=whole,
                         agreement=pooled, reviewers="sample", models="sample", position="sample",
                         self_preference="sample", trends="sample", anomalies="sample", pairs="sample")
