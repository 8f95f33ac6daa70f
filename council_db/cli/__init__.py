"""The command line: the typer app (app) and one thin module per command group over the
library; output prints what every read command returns (table, json, jsonl, csv)."""
