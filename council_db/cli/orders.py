"""council-db orders: display orders per reviewer, shuffled or from a balanced Latin square."""

from __future__ import annotations

import json
from enum import Enum
from typing import Annotated, Optional

import typer

from council_db.cli.context import message
from council_db.cli.formats import LISTING, Csv, Json, Lines, Output, chosen, destination, format_option, wrote


class Design(str, Enum):
    latin = "latin"
    shuffle = "shuffle"


def command(
    models: Annotated[str, typer.Option(metavar="A,B,...", help="Candidate models, comma-separated (at most 26).")],
    reviewers: Annotated[str, typer.Option(metavar="A,B,...", help="Reviewers, comma-separated.")],
    seed: Annotated[Optional[int], typer.Option(help="Seed; the same seed gives the same orders. "
                                                     "Default: drawn and printed on stderr.")] = None,
    design: Annotated[Design, typer.Option(
        help="latin: balanced (Williams) Latin square; shuffle: an independent shuffle per reviewer.")] = Design.latin,
    fmt: Annotated[Optional[str], format_option(
        *LISTING, help="table, json (label_to_model per reviewer), jsonl or csv (a row per reviewer); default "
                       "table, or as -o's suffix says.")] = None,
    as_json: Json = False, nl: Lines = False, as_csv: Csv = False, output: Output = None,
) -> None:
    """The order each reviewer should see the answers in.

    Seeded and reproducible, in the label_to_model form a council uses ("Response A" = shown
    first). Per-reviewer orders are what lets the bias report tell position effects from
    answer quality."""
    from council_db.cli.output import emit_rows
    from council_db.ingest.orders import presentation_orders

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    orders = presentation_orders(models.split(","), reviewers.split(","), seed=seed, design=design.value)
    message(f"design {orders.design}, seed {orders.seed} (--seed {orders.seed} gives these orders again)")
    for note in orders.notes:
        message(f"note: {note}")
    with destination(output) as out:
        if fmt == "json":
            out.write(json.dumps(orders.as_json(), indent=2) + "\n")
        else:
            emit_rows(orders.rows(), fmt, title=f"display order per reviewer ({orders.design})", out=out)
    wrote(output, fmt, len(orders.rows()), "reviewer")
