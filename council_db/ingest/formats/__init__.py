"""Judge logs other than llm-council's, read into the same records.

Each format is one module whose ``Reader`` is called with a batch of lines (ingest/lines.py)
and returns them as validated ``contract.record.Record`` structs with their line numbers,
and the lines that do not fit as rejected lines naming the line, the field and the fix. From
there an import is the same whatever the format: normalising, batching, worker processes,
rejected lines, the writer and resuming a grown file (ingest/importer.py). Adding a format is
one module here, its name in options.FORMATS, readers.reader and cli/importing.py's
FORMATS, and one test file.
"""
