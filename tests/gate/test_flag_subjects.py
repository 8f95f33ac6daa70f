"""no-flags' reviewer filter: a flag counts for a reviewer when its subject names it as the
reviewer, never when the same id is the candidate model (a council's judges are its models)."""

from __future__ import annotations

import pytest

from council_db.gate.verdicts import names_reviewer
from council_db.report.model import Flag

GPT = "openai/gpt-4o"


def flag(kind: str, subject: str) -> Flag:
    return Flag(kind=kind, subject=subject, estimate=1.0, p_value=0.001, q_value=0.01, message="m")


@pytest.mark.parametrize("kind, subject, named", [
    ("reviewer_severity", GPT, True),
    ("trend", f"reviewer {GPT}", True),
    ("change_point", f"reviewer {GPT}", True),
    ("affinity", f"{GPT} -> anthropic/claude-3-5-sonnet", True),
    ("position", f"{GPT} (display slots)", True),
    ("position", f"{GPT} (pairwise model)", True),
    ("trend", f"model {GPT}", False),  # the candidate model's trend, not the judge's
    ("affinity", f"anthropic/claude-3-5-sonnet -> {GPT}", False),  # another judge's liking of it
    ("reviewer_severity", "openai/gpt-4o-mini", False),
    ("reviewer_severity", f"{GPT} · prompt single-v1 · T=0", True),  # an identity of the model
    ("position", f"{GPT} · prompt single-v1 (display slots)", True),
    ("trend", f"reviewer {GPT}-mini · prompt single-v1", False),
])
def test_a_flag_names_a_reviewer_only_where_it_is_the_reviewer(kind, subject, named):
    assert names_reviewer(flag(kind, subject), GPT) is named


def test_a_full_identity_label_names_that_identity_only():
    label = f"{GPT} · prompt single-v1"
    assert names_reviewer(flag("reviewer_severity", label), label)
    assert names_reviewer(flag("affinity", f"{label} -> m"), label)
    assert not names_reviewer(flag("reviewer_severity", f"{GPT} · prompt single-v2"), label)
    assert not names_reviewer(flag("reviewer_severity", GPT), label)
