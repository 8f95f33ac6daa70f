"""council-db: the database and bias auditor for LLM councils."""

__version__ = "0.1.0"
