"""The report's contract for pairwise data (two answers per session, a verdict per call):
self-preference stated on the pair, and the effects such a design cannot identify. How each
is estimated: docs/methods.md, "Pairwise data"."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from council_db.report.contract_base import Contract, Metric


class PairSelfPreference(Metric, kw_only=True):
    pairs: Annotated[int, Meta(description=(
        "pairs of answers (either order) where the judge's own verdicts met a third judge's on the same two "
        'answers in the same order: the clusters of the CI; n_sessions and n_records count those calls'
    ))]
    odds_ratio: Annotated[float | None, Meta(description='exp(estimate): the odds ratio itself')] = None


class NotIdentified(Contract, kw_only=True):
    label: Annotated[str, Meta(description=(
        "what the text, Markdown and HTML reports print in place of these effects: 'not identified (pairwise)' "
        "(two answers per session) or 'not identified (fixed totals)' (rankings, shared-out points)"
    ))]
    reason: Annotated[str, Meta(description='why: the totals the design fixes')]
    effects: Annotated[list[str], Meta(description=(
        'the effects the design cannot identify: null in this report and left out of the flags'
    ))]


class OddsMetric(Metric, kw_only=True):
    """A Bradley-Terry coefficient: ``estimate`` and its CI in log odds, the odds ratio beside
    them; ``n_records`` counts the games it rests on, ``n_sessions`` their sessions (the
    clusters of its cluster-robust SE); the CI and ``p_value`` (a log odds of 0) are on t(G - 1), G the sessions."""

    name: Annotated[str, Meta(description="'first shown, pooled', 'first shown, JUDGE' or 'length, per SD'")]
    judge: Annotated[str | None, Meta(description='the judge of a per-judge first-shown odds; null when pooled')]
    odds_ratio: float | None
    odds_ratio_ci_low: float | None
    odds_ratio_ci_high: float | None


class PairwiseOdds(Contract, kw_only=True):
    """Position and length on pairwise verdicts in the pairwise model's terms: the Bradley-Terry
    model fitted once on the report's games (its window and sample), with a
    first-shown coefficient per judge and, when the answers' lengths are known, Arena's
    normalised length difference (per SD) as a covariate."""

    outcome_model: Annotated[str, Meta(description="'bradley-terry', 'rao-kupper' (ties), 'ordinal' or "
                                                   "'quasi-binomial': how verdicts and ties are modelled")]
    adjusts_for: Annotated[str, Meta(description='what each odds ratio is net of')]
    first_shown: Annotated[list[OddsMetric], Meta(description=(
        'the odds that the answer shown first wins, other things equal: pooled first (over judges, weighted by '
        'their games), then per judge; one judge: that judge only'
    ))]
    length: Annotated[OddsMetric | None, Meta(description=(
        "the odds ratio per SD of Arena's normalised length difference (len_a - len_b) / (len_a + len_b); null when "
        'no game has both answers\' lengths'
    ))]
    length_unit: Annotated[str, Meta(description="'tokens' or 'characters'")]
    relation: Annotated[str, Meta(description="how these odds relate to position.consistency.first_shown_wins")]
    games: int
    sessions: int
