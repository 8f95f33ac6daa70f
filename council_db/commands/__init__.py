"""CLI commands, one module per area; cli.py puts them together."""
