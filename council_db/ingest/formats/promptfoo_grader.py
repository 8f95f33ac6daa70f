"""Who graded a promptfoo assertion: the grading provider, its prompt and sampling settings.

promptfoo grades a model-graded assertion with the first provider of: the assertion's own
``provider``, the test's ``options.provider`` (into which promptfoo merges
``defaultTest.options``, where ``promptfoo eval --grader`` puts its grader), the config's
``defaultTest.options.provider`` (for a file whose test cases do not carry it), and else its
default grader, which the file does not name: ``--judge NAME``, else DEFAULT_GRADER,
promptfoo's documented default with an OpenAI key (llm-rubric's documentation; an Anthropic or
Google key picks another model, and older promptfoo versions had gpt-4o and gpt-4.1): an
assumption, said in docs/import-formats.md. A provider is an id ("openai:gpt-4.1"), an object {id, config:
{temperature, seed}}, or a map of providers by use whose ``text`` one grades.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from council_db.contract.fields import LineError

DEFAULT_GRADER = "openai:gpt-5"
Identity = dict[str, Any]  # reviewer_id and the provenance fields of a record


def digest(value: Any, size: int) -> str:
    """``size`` hex characters of a JSON value, its keys sorted: the same value, the same digest."""
    return hashlib.sha256(msgspec.json.encode(value, order="sorted")).hexdigest()[:size]


class Grader:
    """The grader of each assertion, given the config's defaultTest (None: the file has no config)."""

    def __init__(self, config: dict[str, Any] | None, judge: str | None = None):
        default_test = (config or {}).get("defaultTest")
        options = default_test.get("options") if isinstance(default_test, dict) else None
        self.default = options.get("provider") if isinstance(options, dict) else None
        self.fallback = judge or DEFAULT_GRADER  # --judge: the default grader the run really had

    def of(self, where: str, assertion: Any, test_case: Any) -> Identity:
        """reviewer_id and, where the file says them, reviewer_prompt, _temperature and _seed."""
        options = test_case.options if test_case is not None and test_case.options else {}
        stated = ((f"{where}.assertion.provider", assertion.provider),
                  ("testCase.options.provider", options.get("provider")),
                  ("config.defaultTest.options.provider", self.default))
        field, provider = next(((field, provider) for field, provider in stated if provider is not None),
                               (None, self.fallback))
        identity = provider_identity(field or "provider", provider)
        rubric = assertion.rubricPrompt if assertion.rubricPrompt is not None else options.get("rubricPrompt")
        identity["reviewer_prompt"] = assertion.type if rubric is None else f"sha256:{digest(rubric, 12)}"
        return identity


def provider_identity(field: str, provider: Any) -> Identity:
    """A provider as reviewer_id (its id), with its configured temperature and seed."""
    if isinstance(provider, str):
        return {"reviewer_id": provider}
    if isinstance(provider, dict) and isinstance(provider.get("id"), str):
        config = provider.get("config")
        settings = config if isinstance(config, dict) else {}
        return {"reviewer_id": provider["id"], "reviewer_temperature": _number(field, settings, "temperature"),
                "reviewer_seed": _number(field, settings, "seed")}
    if isinstance(provider, dict) and "text" in provider:
        return provider_identity(f"{field}.text", provider["text"])
    raise LineError(field, f"got a {type(provider).__name__}; expected a provider id such as \"openai:gpt-4.1\", "
                           "or {\"id\": ..., \"config\": {...}}")


def _number(field: str, settings: dict[str, Any], name: str) -> Any:
    """A sampling setting as the provider's config gives it; LineError when it is no number."""
    value = settings.get(name)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise LineError(f"{field}.config.{name}", f"got a {type(value).__name__}; expected a number")
    return value
