"""What an llm-council run has in hand (stage-1 answers, stage-2 reviews, label_to_model),
turned into the bias records llm-council's own writer produces for it.

The rules follow llm-council's ``create_bias_records_from_session`` (bias_persistence.py):
- one record per reviewer and label it ranked (or, without a ranking, scored);
- position is the label's display slot: ``display_index`` in the enhanced form
  (``{"Response A": {"model": m, "display_index": 0}}``), letter order in the legacy form
  (``{"Response A": m}`` -> 0); a label without a derivable slot is dropped with a warning,
  never given its ranking index;
- a reviewer marked ``abstained`` gives records for whatever it ranked or scored all the same
  (llm-council's writer does not look at the mark; its parser leaves an abstaining reviewer's
  ranking and scores empty), with a warning; self-reviews are kept; one model under two
  labels gives two records;
- length is the number of characters of the model's first stage-1 answer, the score a
  finite number or 0.0 ("ranked but never scored"), the scale "1-10";
- the query itself is never part of a record: only coarse metadata, and at consent level 4
  its HMAC prefix (contract/query_hash.py), or null, with a warning, when there is no key.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

from council_db.contract.query_hash import NO_KEY

RECORD_SCHEMA_VERSION = "1.2.0"
SCORE_SCALE = "1-10"
COUNCIL_CONFIG_VERSION = "0.1.0"  # what llm-council's writer puts there
RESEARCH = 4

_LETTER_LABEL = re.compile(r"^[Rr]esponse\s+([A-Za-z])$")
_CODE_WORDS = ("def", "function", "class", "import", "python", "javascript")
_MATH_WORDS = ("calculate", "compute", "equation", "math", "+", "=")
_CREATIVE_WORDS = ("write", "story", "poem", "creative", "imagine")

logger = logging.getLogger("council_db")


@dataclass
class SessionRecords:
    records: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def label_positions(label_to_model: dict[str, Any]) -> dict[str, int]:
    """{label: display slot}; labels whose slot cannot be derived are left out, not guessed."""
    positions: dict[str, int] = {}
    for label, value in label_to_model.items():
        if isinstance(value, dict):
            if not value.get("model"):
                continue
            if value.get("display_index") is not None:
                positions[label] = value["display_index"]
                continue
        elif not value:
            continue
        match = _LETTER_LABEL.match(label.strip())
        if match:
            positions[label] = ord(match[1].upper()) - ord("A")
    return positions


def label_model(label_to_model: dict[str, Any], label: str) -> str:
    value = label_to_model.get(label)
    if isinstance(value, dict):
        return value.get("model") or ""
    return str(value) if value else ""


def query_metadata(query: str) -> dict[str, str]:
    """llm-council's coarse, text-free description of a query: category by keyword, length
    bucket by characters, language (always "en" there)."""
    length = len(query)
    bucket = "short" if length < 50 else "medium" if length < 200 else "long"
    lower = query.lower()
    category = "general"
    for name, words in (("coding", _CODE_WORDS), ("math_reasoning", _MATH_WORDS),
                        ("creative_writing", _CREATIVE_WORDS)):
        if any(word in lower for word in words):
            category = name
            break
    return {"category": category, "token_bucket": bucket, "language": "en"}


def record_score(value: Any) -> float:
    """A reviewer's score as llm-council records it: model output is untrusted, so anything
    that is not a finite number becomes 0.0 (its "ranked but never scored")."""
    if isinstance(value, bool) or value is None:
        return 0.0
    try:
        result = float(value)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return result if math.isfinite(result) else 0.0


def _first_lengths(stage1_results: list[dict[str, Any]]) -> dict[str, int]:
    lengths: dict[str, int] = {}
    for result in stage1_results:
        lengths.setdefault(result.get("model", ""), len(result.get("response") or ""))
    return lengths


def build_records(
    session_id: str,
    stage1_results: list[dict[str, Any]],
    stage2_results: list[dict[str, Any]],
    label_to_model: dict[str, Any],
    *,
    query: str | None = None,
    consent_level: int = 1,
    timestamp: str | None = None,
    query_hasher: Callable[[str], str | None] | None = None,
) -> SessionRecords:
    """The session's bias records, in llm-council's order (reviewer by reviewer).
    ``query_hasher`` is called only at consent level 4 with a query; None from it (or no
    hasher) means there is no key: no hash."""
    out = SessionRecords()
    when = timestamp if timestamp is not None else datetime.now(timezone.utc).isoformat()
    hashed = bool(query) and consent_level == RESEARCH
    query_hash = query_hasher(query) if hashed and query_hasher else None
    if hashed and query_hash is None:
        out.warnings.append(f"session {session_id}: {NO_KEY}")
    metadata = query_metadata(query) if query else None
    positions = label_positions(label_to_model)
    lengths = _first_lengths(stage1_results)
    for review in stage2_results:
        reviewer = review.get("model", "")
        parsed = review.get("parsed_ranking") or {}
        scores = parsed.get("scores") or {}
        labels = parsed.get("ranking") or list(scores)
        if parsed.get("abstained") and labels:
            out.warnings.append(f"session {session_id}: reviewer {reviewer} is marked abstained but ranked or scored "
                                f"{len(labels)} labels: recorded, as llm-council's writer records them")
        for label in labels:
            model = label_model(label_to_model, label)
            if not model or label not in positions:
                out.warnings.append(_dropped(session_id, reviewer, label, model))
                continue
            out.records.append({
                "schema_version": RECORD_SCHEMA_VERSION, "session_id": session_id, "timestamp": when,
                "consent_level": consent_level, "reviewer_id": reviewer, "model_id": model,
                "position": positions[label], "response_length_chars": lengths.get(model, 0),
                "score_value": record_score(scores.get(label)), "score_scale": SCORE_SCALE,
                "council_config_version": COUNCIL_CONFIG_VERSION, "query_hash": query_hash,
                "query_metadata": metadata,
            })
    for text in out.warnings:
        logger.warning(text)
    return out


_LLM_COUNCIL_LABEL = re.compile(r"Response [A-Z]{1,2}")


def _dropped(session_id: str, reviewer: str, label: str, model: str) -> str:
    if not model and not _LLM_COUNCIL_LABEL.fullmatch(label):  # a label a model wrote may be any text
        return (f"session {session_id}: reviewer {reviewer} ranked a label of {len(label):,} characters that is "
                "not in label_to_model: dropped")
    if not model:
        why = "it is not in label_to_model"
    else:
        why = (f"its display slot cannot be derived (model {model}: give display_index, or a label "
               "'Response A', 'Response B', ... in display order)")
    return f"session {session_id}: reviewer {reviewer}'s label {label!r} dropped: {why}"
