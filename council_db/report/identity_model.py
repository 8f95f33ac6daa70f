"""The report's contract for who a reviewer is, where a log gave its provenance (issue 30):
``reviewers[].identity``. Apart from model.py (at its size limit), on ``contract_base``.

A reviewer with a prompt template or sampling settings is its own reviewer, named by its
identity's label (contract/reviewer_identity) in ``reviewer_id``; ``identity`` spells the
label out. A reviewer without provenance has no ``identity`` key at all, so its report is the
same document, byte for byte, as before.
"""

from __future__ import annotations

import msgspec

from council_db.contract.reviewer_identity import Identity
from council_db.report.contract_base import Contract


class ReviewerIdentity(Contract, kw_only=True):
    """Who the reviewer was, as its log said (absent: the reviewer is its model alone): its
    model (self-preference is on that model's answers), its prompt template, temperature and
    seed (null: not said)."""

    model: str
    prompt: str | None
    temperature: float | None
    seed: int | None


def reviewer_identity(identities: dict[str, Identity], reviewer: str) -> ReviewerIdentity | msgspec.UnsetType:
    """The reviewer's identity in the report, or UNSET (no key in the JSON) without provenance."""
    identity = identities.get(reviewer)
    if identity is None:
        return msgspec.UNSET
    return ReviewerIdentity(model=identity.model, prompt=identity.prompt, temperature=identity.temperature,
                            seed=identity.seed)
