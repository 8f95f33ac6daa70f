#!/usr/bin/env bash
# The main job on built-in demo data: set up a virtualenv (once), simulate council sessions
# with planted biases, import them, show what is stored and the bias report. Prints each
# command it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/council-db ]; then
  python3 -m venv .venv
  .venv/bin/pip install -q -e .
fi
mkdir -p demo
run() { printf '\n$ %s\n' "$*" >&2; "$@"; }
db=(--db demo/council.db)
run .venv/bin/council-db "${db[@]}" simulate -o demo/bias_metrics.jsonl --sessions 300 --seed 7 \
  --reviewer-offset openai/gpt-4o=-0.8,anthropic/claude-3-5-sonnet=0.6 \
  --position-effect 0.4,0,0,-0.2 --self-preference 0.5 --verbosity 0.3 --unscored 0.01 \
  --truth demo/truth.json
run .venv/bin/council-db "${db[@]}" import demo/bias_metrics.jsonl
run .venv/bin/council-db "${db[@]}" stats
run .venv/bin/council-db "${db[@]}" sessions --sessions 5
run .venv/bin/council-db "${db[@]}" bias-report
printf '\nNext: sqlite3 %s "SELECT reviewer, AVG(score_value) FROM score_records GROUP BY reviewer"\n' \
  "$(.venv/bin/council-db "${db[@]}" db path)" >&2
