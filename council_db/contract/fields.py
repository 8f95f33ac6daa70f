"""The llm-council bias record's fields, its defaults, and why a stored score can be excluded.

The rest of the contract sits beside this module: schema versions, timestamps, scales, the
session envelope, the validated ``Record`` and a batch of them as columns (``ScoreBatch``).
Whole lines are validated in ingest/ (pydantic in validation.py, msgspec in fast_decode.py).
The contract imports nothing else of council_db's, so every layer can stand on it.
"""

from __future__ import annotations

FIELDS = (
    "schema_version",
    "session_id",
    "timestamp",
    "consent_level",
    "reviewer_id",
    "model_id",
    "position",
    "response_length_chars",
    "score_value",
    "score_scale",
    "council_config_version",
    "query_hash",
    "query_metadata",
)
# council-db's own field beside llm-council's 13: whose verdict a record is. A reviewer is an
# LLM judge unless marked a human rater or a known right answer (issue 28); the kind belongs to
# the reviewer (models.reviewer_kind), so a line states it for its reviewer, and a line without
# it leaves a stored reviewer's kind as it is.
REVIEWER_KINDS = ("judge", "human", "gold")
DEFAULT_REVIEWER_KIND = "judge"
# The answer's style where a format carries it (issue 29): its length in tokens and its markdown
# counts. Optional, each on its own: missing or null is unknown (never 0), stored apart
# (models.AnswerStyle) only when some is known; export writes the known ones after the 13.
STYLE_FIELDS = ("response_tokens", "markdown_headers", "markdown_lists", "markdown_bold")
# Who the judge really was, where a log says so (issue 30): the prompt template it was given and
# its sampling settings. A reviewer is its model (reviewer_id) plus these; missing or null: not said.
PROVENANCE_FIELDS = ("reviewer_prompt", "reviewer_temperature", "reviewer_seed")
# Several named scores of one answer by one reviewer (a rubric's dimensions, issue 30): an object
# of dimension name -> score on the record's scale, beside the overall score_value.
DIMENSIONS_FIELD = "score_dimensions"
MAX_DIMENSIONS = 64
# a record's session key, reviewer and model (characters), and its scores' bound (either sign)
MAX_NAME = 500
MAX_SCORE = 1e12
MAX_DIMENSION_NAME = 100
# what a line may carry; export writes FIELDS, and the rest where known
LINE_FIELDS = (*FIELDS, "reviewer_kind", *STYLE_FIELDS, *PROVENANCE_FIELDS, DIMENSIONS_FIELD)
METADATA_KEYS = ("category", "token_bucket", "token_count_bucket", "language")
# llm-council writes three short words ("creative_writing" is its longest); the caps keep a
# runaway writer from storing megabytes per session (issue 14 found a 10 MB value stored).
METADATA_VALUE_MAX_CHARS = 100
METADATA_MAX_CHARS = 64 * 1024  # query_metadata as compact JSON, known keys or not
DEFAULT_SCALE = "1-10"
DEFAULT_CONSENT = 1  # llm-council's LOCAL_ONLY default
# A line without position (or with null) is stored at 0, as llm-council's own reader takes it
# (bias_persistence.BiasMetricRecord.from_jsonl_line: data.get("position", 0)), so natural keys
# match upstream's; but the score is marked as not in a display slot (scores.display_order
# false), because 0 would otherwise read as "shown first", which nobody knows it was.
DEFAULT_POSITION = 0
# A display slot is at most this (more answers in one prompt is no council); a position that
# is not a display slot (schema < 1.2.0) only tells records apart, and may be any 32-bit key
# (fastchat-single keeps two gradings of one answer apart by one: ingest/formats).
MAX_SLOT = 1_000
MAX_POSITION = 2**31 - 1
# The length of an answer nobody has the text of (a judge log imported without its answers):
# null in a line, -1 in the database, and left out of every length analysis.
UNKNOWN_LENGTH = -1
EXCLUSION_REASONS: dict[str, tuple[int, str]] = {
    "unscored": (1, "0 on a scale starting above 0: llm-council's marker for ranked but never scored"),
    "out_of_scale": (2, "score outside the range of its scale"),
}


class LineError(ValueError):
    """A bad line: which field, what was wrong, what was expected."""

    def __init__(self, field: str | None, problem: str):
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}" if field else problem)
