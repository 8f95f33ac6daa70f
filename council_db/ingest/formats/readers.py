"""The reader of a batch of lines in a chosen format."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from council_db.ingest.formats.options import LLM_COUNCIL, FormatOptions

if TYPE_CHECKING:
    from council_db.ingest.formats.judge_lines import LineReader
    from council_db.ingest.lines import LineBatch, Parsed
    from council_db.ingest.sources import Source


def reader(options: FormatOptions, source: Source) -> Callable[[LineBatch], Parsed]:
    """What reads a batch of ``source``'s lines in ``options.format``."""
    from council_db.ingest.lines import parse_batch

    if options.format == LLM_COUNCIL:
        return parse_batch
    return reader_class(options.format)(options, source)  # type: ignore[call-arg]


def reader_class(format: str) -> type[LineReader]:
    """The reader of a judge-log format (llm-council's lines are read by lines.parse_batch)."""
    if format == "fastchat-single":
        from council_db.ingest.formats.fastchat_single import Reader
    elif format == "fastchat-pair":
        from council_db.ingest.formats.fastchat_pair import Reader
    elif format == "llmbar":
        from council_db.ingest.formats.llmbar import Reader
    elif format == "judgebench":
        from council_db.ingest.formats.judgebench import Reader
    elif format == "alpaca-eval":
        from council_db.ingest.formats.alpaca_eval import Reader
    elif format == "csv":
        from council_db.ingest.formats.csv_table import Reader
    elif format == "jsonl":
        from council_db.ingest.formats.jsonl_paths import Reader
    elif format == "arena-hard":
        from council_db.ingest.formats.arena_hard import Reader
    elif format == "openai-evals":
        from council_db.ingest.formats.openai_evals import Reader
    elif format == "promptfoo":
        from council_db.ingest.formats.promptfoo import Reader
    elif format == "inspect":
        from council_db.ingest.formats.inspect_log import Reader
    else:
        from council_db.ingest.formats.fastchat_review import Reader
    return Reader
