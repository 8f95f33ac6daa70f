"""arena-hard-auto's answers (``import --from arena-hard --answers DIR``): each answer's length
and style, by model and question.

``data/<bench>/model_answer/<model>.jsonl``, one answer a line, in two generations: v0.1
(question_id, model_id, ``choices[0].turns[0].content``) and v2 (uid, model, ``messages``,
whose last message's ``content.answer`` is the answer). Either may carry ``metadata``
(utils/add_markdown_info.py): ``token_len`` (tiktoken's count), and ``header_count``,
``list_count``, ``bold_count``, each a number or an object of numbers by kind (h1..h6;
ordered, unordered; ``**``, ``__``), summed as show_result.py sums them. A count that is
missing or not a number >= 0 is unknown, never 0. The model is the line's own (``model`` or
``model_id``), else the file's name. Files are read as answers.py reads FastChat's: regular
files of at most 64 MiB, a line that cannot be read one error naming the file, line and field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from council_db.ingest.formats.answers import answer_field, answer_files, answer_id, json_lines, model_name

# the answer file's metadata key -> the record's style field (contract.fields.STYLE_FIELDS)
METADATA = {"token_len": "response_tokens", "header_count": "markdown_headers", "list_count": "markdown_lists",
            "bold_count": "markdown_bold"}
MAX_COUNT = 2**31 - 1
V2_ANSWER = "arena-hard-auto's v2 answer format (the last of messages holds content.answer)"
V01_ANSWER = "arena-hard-auto's v0.1 answer format (choices[0].turns[0].content)"


@dataclass(frozen=True)
class AnswerStyle:
    chars: int | None  # None: the answer's text is not a string
    style: dict[str, int]  # the known style fields only


def answer_styles(directory: Path) -> dict[tuple[str, str], AnswerStyle]:
    """(model, question id as text) -> the answer's length and style, from DIR/*.jsonl."""
    found = {}
    for path in answer_files(directory, "*.jsonl"):
        for number, line in json_lines(path):
            v2 = isinstance(line, dict) and "uid" in line
            question = answer_id(path, number, line, "uid" if v2 else "question_id")
            named = line.get("model", line.get("model_id", path.stem)) if isinstance(line, dict) else path.stem
            model = model_name(path, number, "model", named)
            text = (answer_field(path, number, line, "messages", -1, "content", "answer", layout=V2_ANSWER) if v2
                    else answer_field(path, number, line, "choices", 0, "turns", 0, "content", layout=V01_ANSWER))
            found[(model, question)] = AnswerStyle(len(text) if isinstance(text, str) else None,
                                                   _style(line.get("metadata")))
    return found


def _style(metadata: Any) -> dict[str, int]:
    """The known style fields of an answer's metadata."""
    if not isinstance(metadata, dict):
        return {}
    counts = {field: _count(metadata.get(key)) for key, field in METADATA.items()}
    return {field: count for field, count in counts.items() if count is not None}


def _count(value: Any) -> int | None:
    """A count, or the sum of an object of counts; None when it is no such thing."""
    if isinstance(value, dict):
        parts = [_count(part) for part in value.values()]
        return None if not parts or None in parts else _count(sum(parts))  # type: ignore[arg-type]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        return None
    return value
