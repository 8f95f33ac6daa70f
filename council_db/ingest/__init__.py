"""Records coming in. From files: sources (which files), lines (reading JSONL in batches),
validation (pydantic, the authority) and fast_decode (msgspec, the fast path), normalise
(lines to rows), pipeline (worker processes) and importer (provenance, resume, strict).
From code: council_records (llm-council's writer rules), recording (one council session),
and orders (the display orders reviewers should see). Stands on store/ and contract/."""
