"""What the two FastChat llm_judge readers (single grades, pairwise judgments) share: a line
type with or without the judge's prompt, the answers the judge saw, and the bench a session
key starts with."""

from __future__ import annotations

from typing import ClassVar

from council_db.ingest.formats.answers import categories, turn_texts
from council_db.ingest.formats.judge_lines import LineReader, required
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.sources import Source


def bench_prefix(bench: str | None) -> str:
    """``NAME/`` before a session key when --bench names the benchmark."""
    return f"{bench}/" if bench else ""


class LlmJudgeReader(LineReader):
    """With --answers the line is read with the judge's prompt, which says whether the answer
    file still holds the text that was judged (FastChat regenerates answers in place)."""

    plain: ClassVar[type]
    prompted: ClassVar[type]

    def __init__(self, options: FormatOptions, source: Source):
        self.line_type = self.plain if options.answers is None else self.prompted
        super().__init__()
        self.bench = options.bench
        self.texts = {} if options.answers is None else turn_texts(options.answers)
        self.categories = categories(options.answers)

    @classmethod
    def required_fields(cls) -> tuple[str, ...]:
        """The fields every line has (the judge's prompt only with --answers)."""
        return required(cls.plain)

    def seen_length(self, model: str, question_id: int | str, turn: int, prompt: str | None) -> int | None:
        """The answer's characters, when --answers holds the text the judge saw in ``prompt``."""
        turns = self.texts.get((model, str(question_id)))
        if prompt is None or not turns or turn > len(turns):
            return None
        text = turns[turn - 1]
        return len(text) if text is not None and text in prompt else None
