"""The data contract: what one llm-council bias record is (fields, schema versions,
timestamps, scales, the session envelope, the validated ``Record``, a batch as columns,
the consent-level-4 query hash). The floor of the package: it imports nothing above it."""
