"""Write reference.json: the records llm-council's own writer produces for the sessions in
sessions.json. Run it with an interpreter that has llm-council installed (never council-db):

    /path/to/llm-council-venv/bin/python tests/data/llm_council_writer/make_reference.py

It calls llm_council.bias_persistence.create_bias_records_from_session as llm-council's
persist_session_bias_data does, one case at a time:
- "hash_secret": true sets LLM_COUNCIL_HASH_SECRET to the file's "secret";
- "hash_secret": false leaves llm-council no key to be had: LLM_COUNCIL_HASH_SECRET unset and
  LLM_COUNCIL_HASH_SECRET_FILE naming a path under a regular file, where no key can be read
  or created (so it does not make its per-install key in the operator's home either).
llm-council stamps each record with the time it runs; the script puts the case's "timestamp"
in its place so the file does not change from run to run. Nothing else is changed.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import asdict
from importlib.metadata import version
from pathlib import Path

from llm_council.bias_persistence import ConsentLevel, create_bias_records_from_session

HERE = Path(__file__).parent


def upstream_records(session: dict, secret: str | None, nowhere: str) -> list[dict]:
    os.environ.pop("LLM_COUNCIL_HASH_SECRET", None)
    os.environ["LLM_COUNCIL_HASH_SECRET_FILE"] = nowhere
    if secret is not None:
        os.environ["LLM_COUNCIL_HASH_SECRET"] = secret
    records = create_bias_records_from_session(
        session_id=session["session_id"], stage1_results=session["stage1_results"],
        stage2_results=session["stage2_results"], label_to_model=session["label_to_model"],
        query=session.get("query"), consent_level=ConsentLevel(session["consent_level"]))
    return [{**asdict(r), "timestamp": session["timestamp"]} for r in records]


def main() -> None:
    inputs = json.loads((HERE / "sessions.json").read_text(encoding="utf-8"))
    with tempfile.NamedTemporaryFile() as plain_file:
        nowhere = os.path.join(plain_file.name, "hash_secret")  # under a file: no key there, none can be made
        cases = {case["name"]: upstream_records(case["session"], inputs["secret"] if case["hash_secret"] else None,
                                                nowhere)
                 for case in inputs["cases"]}
    out = {"made_by": f"llm-council-core {version('llm-council-core')} (Python {sys.version.split()[0]}), "
                      "make_reference.py", "records": cases}
    (HERE / "reference.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
