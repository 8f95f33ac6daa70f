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
