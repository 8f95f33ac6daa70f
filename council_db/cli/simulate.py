"""`council-db simulate`: write synthetic llm-council bias records with known, planted effects.

Only typer and the standard library are imported here; numpy and the simulator load
when the command runs, so the CLI as a whole starts fast.
"""

from __future__ import annotations

import gzip
import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Annotated, Any, Callable, TypeVar

import typer

T = TypeVar("T")

# Which option to blame when a SimulationConfig field is rejected.
OPTION_FOR_FIELD = {
    "sessions": "--sessions",
    "dimensions": "--dimensions",
    "models": "--models",
    "reviewers": "--reviewers",
    "candidates_per_session": "--candidates-per-session",
    "model_quality": "--quality",
    "reviewer_offsets": "--reviewer-offset",
    "position_effects": "--position-effect",
    "length_quality_corr": "--length-quality-corr",
    "drift": "--drift",
    "drift_at": "--drift-at",
    "anomaly_rate": "--anomalies",
    "unscored_rate": "--unscored",
    "batch_size": "--batch-size",
    "constant_share": "--constant-share",
    "noise_sd": "--noise",
    "schema_version": "--schema-version",
    "consent_level": "--consent-level",
    "days": "--days",
    "end": "--end",
    "humans": "--humans",
    "humans_per_session": "--humans-per-session",
    "gold": "--gold",
    "reference_share": "--reference-share",
    "answer_sd": "--answer-sd",
    "reviewer_noise_sd": "--reviewer-noise",
    "repeats": "--repeats",
    "position_drift": "--position-drift",
    "reviewer_spread": "--reviewer-spread",
    "reviewer_position_spread": "--reviewer-position-spread",
    "reviewer_verbosity_spread": "--reviewer-verbosity-spread",
}


def _parse(parser: Callable[[str], T], text: str | None, option: str) -> T | None:
    """Run a value parser on a given option, turning its ValueError into a usage error."""
    if text is None:
        return None
    try:
        return parser(text)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint=f"'{option}'") from None


def _slot_changes(given: list[str] | None) -> dict[str, list[float]] | None:
    """--position-drift's REVIEWER=X,Y,... values as reviewer -> changes per slot."""
    from council_db import text_values

    if not given:
        return None
    changes = {}
    for item in given:
        name, sep, values = item.partition("=")
        if not sep or not name.strip():
            raise typer.BadParameter(f"bad value {item!r}: expected REVIEWER=X,Y,..., e.g. openai/gpt-4o=0.5,0,0",
                                     param_hint="'--position-drift'")
        changes[name.strip()] = _parse(text_values.parse_floats, values, "--position-drift")
    return changes


def command(
    output: Annotated[
        str,
        typer.Option("-o", "--output", metavar="FILE", help="JSONL file to write ('-' = stdout; '.gz' = gzip)."),
    ],
    sessions: Annotated[int, typer.Option(min=1, help="Number of council sessions.")] = 200,
    seed: Annotated[int, typer.Option(min=0, help="Random seed; same seed and options, same bytes.")] = 0,
    models: Annotated[
        str | None,
        typer.Option(metavar="A,B,...", show_default="4 common models", help="Council model ids."),
    ] = None,
    reviewers: Annotated[
        str | None,
        typer.Option(metavar="A,B,...", show_default="the models", help="Reviewer ids."),
    ] = None,
    candidates_per_session: Annotated[
        int | None,
        typer.Option(
            min=1, metavar="K", show_default="all models", help="Answers per session (a random subset)."
        ),
    ] = None,
    quality: Annotated[
        str | None,
        typer.Option(metavar="MODEL=X,...", help="True quality per model, in score points."),
    ] = None,
    reviewer_offset: Annotated[
        str | None,
        typer.Option(metavar="REVIEWER=X,...", help="Harshness (-) or leniency (+) per reviewer."),
    ] = None,
    position_effect: Annotated[
        str | None,
        typer.Option(metavar="X,Y,...", help="Score added per display slot, first slot first."),
    ] = None,
    self_preference: Annotated[
        float, typer.Option(help="Score added when a model reviews its own answer.")
    ] = 0.0,
    verbosity: Annotated[float, typer.Option(help="Score added per SD of log answer length.")] = 0.0,
    length_quality_corr: Annotated[
        float,
        typer.Option(min=-1.0, max=1.0, help="Correlation of model length with quality (-1..1)."),
    ] = 0.0,
    drift: Annotated[
        str | None,
        typer.Option(metavar="REVIEWER=X,...",
                     help="Score change from first to last session (centred: the average level stays)."),
    ] = None,
    drift_at: Annotated[
        float | None,
        typer.Option(metavar="SHARE", show_default="linear drift",
                     help="Make --drift a step at this share of the time span (0..1)."),
    ] = None,
    position_drift: Annotated[
        list[str] | None,
        typer.Option(metavar="REVIEWER=X,Y,...",
                     help="Change of this reviewer's score per display slot, first slot first, shaped in time "
                          "as --drift (a step with --drift-at); repeatable."),
    ] = None,
    anomalies: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, metavar="RATE", help="Share of sessions made anomalous."),
    ] = 0.0,
    unscored: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, metavar="RATE", help="Share of records with score 0.0."),
    ] = 0.0,
    noise: Annotated[float, typer.Option(min=0.0, metavar="SD", help="Score noise SD.")] = 1.0,
    batch_size: Annotated[
        int,
        typer.Option(min=1, metavar="N", help="Sessions stamped with one time, as a judge run stamps its batch."),
    ] = 1,
    integer_scale: Annotated[
        bool, typer.Option("--integer-scale", help="Whole scores 1..10 (as GPT-4 grades MT-bench).")
    ] = False,
    constant_share: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, metavar="SHARE",
                     help="Share of sessions where each reviewer gives every answer one score."),
    ] = 0.0,
    per_reviewer_shuffle: Annotated[
        bool,
        typer.Option("--per-reviewer-shuffle", help="Shuffle per reviewer, not once per session."),
    ] = False,
    schema_version: Annotated[
        str,
        typer.Option(metavar="V", help="Record schema version; below 1.2.0 positions are rankings."),
    ] = "1.2.0",
    consent_level: Annotated[int, typer.Option(min=0, max=4, help="consent_level of every record.")] = 1,
    days: Annotated[float, typer.Option(help="Days the sessions span, ending at --end.")] = 90.0,
    end: Annotated[
        str | None,
        typer.Option(
            metavar="ISO-DATETIME",
            show_default="today 00:00 UTC",
            help="Time of the last session; UTC if no zone.",
        ),
    ] = None,
    humans: Annotated[
        str | None,
        typer.Option(metavar="A,B,...", show_default="none",
                     help="Human raters (reviewer_kind human), rating like judges with their own noise."),
    ] = None,
    humans_per_session: Annotated[
        int | None,
        typer.Option(min=1, metavar="N", show_default="all", help="Humans drawn to rate each rated session."),
    ] = None,
    gold: Annotated[
        str | None,
        typer.Option(metavar="NAME", show_default="none",
                     help="A gold reviewer (reviewer_kind gold) scoring each answer's true quality."),
    ] = None,
    reference_share: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, metavar="SHARE", help="Share of sessions the humans and gold rate."),
    ] = 1.0,
    answer_sd: Annotated[
        float,
        typer.Option(min=0.0, metavar="SD", help="SD of each answer's own quality, seen by every rater."),
    ] = 0.0,
    reviewer_noise: Annotated[
        str | None,
        typer.Option(metavar="REVIEWER=SD,...", show_default="--noise",
                     help="Score noise SD per reviewer or human."),
    ] = None,
    dimensions: Annotated[
        str | None,
        typer.Option(metavar="A,B,...", show_default="none",
                     help="Rubric dimensions each scored record also scores (score_dimensions), "
                          "e.g. llm-council's accuracy,relevance,completeness,conciseness,clarity."),
    ] = None,
    repeats: Annotated[
        int,
        typer.Option(min=1, metavar="K", help="Times each reviewer scores each answer, each with its own noise "
                                              "(repeat stability)."),
    ] = 1,
    truth: Annotated[
        Path | None,
        typer.Option(metavar="PATH", help="Also write the planted parameters as JSON."),
    ] = None,
    compress: Annotated[
        bool, typer.Option("--gzip", help="Gzip the output (implied by a '.gz' name).")
    ] = False,
    reviewer_spread: Annotated[
        float,
        typer.Option(min=0.0, metavar="SD", help="Draw each judge's severity from a normal with this SD "
                                                 "(added to --reviewer-offset)."),
    ] = 0.0,
    reviewer_position_spread: Annotated[
        float,
        typer.Option(min=0.0, metavar="SD", help="Draw each judge's own effect per display slot from a normal "
                                                 "with this SD."),
    ] = 0.0,
    reviewer_verbosity_spread: Annotated[
        float,
        typer.Option(min=0.0, metavar="SD", help="Draw each judge's verbosity from a normal with this SD "
                                                 "around --verbosity."),
    ] = 0.0,
) -> None:
    """Write simulated records with planted biases.

    llm-council-format JSONL with effects planted at known sizes, for trying the tool
    and for testing that its estimators find them."""
    from council_db import simulate as sim
    from council_db import text_values

    given: dict[str, Any] = {
        "models": _parse(text_values.parse_names, models, "--models"),
        "reviewers": _parse(text_values.parse_names, reviewers, "--reviewers"),
        "model_quality": _parse(text_values.parse_mapping, quality, "--quality"),
        "reviewer_offsets": _parse(text_values.parse_mapping, reviewer_offset, "--reviewer-offset"),
        "position_effects": _parse(text_values.parse_floats, position_effect, "--position-effect"),
        "drift": _parse(text_values.parse_mapping, drift, "--drift"),
        "position_drift": _slot_changes(position_drift),
        "end": _parse(text_values.parse_utc_datetime, end, "--end"),
        "humans": _parse(text_values.parse_names, humans, "--humans"),
        "reviewer_noise_sd": _parse(text_values.parse_mapping, reviewer_noise, "--reviewer-noise"),
        "dimensions": _parse(text_values.parse_names, dimensions, "--dimensions"),
    }
    try:
        config = sim.SimulationConfig(
            sessions=sessions,
            seed=seed,
            candidates_per_session=candidates_per_session,
            self_preference=self_preference,
            verbosity=verbosity,
            length_quality_corr=length_quality_corr,
            drift_at=drift_at,
            anomaly_rate=anomalies,
            unscored_rate=unscored,
            noise_sd=noise,
            batch_size=batch_size,
            integer_scale=integer_scale,
            constant_share=constant_share,
            per_reviewer_shuffle=per_reviewer_shuffle,
            schema_version=schema_version,
            consent_level=consent_level,
            days=days,
            humans_per_session=humans_per_session,
            gold=gold,
            reference_share=reference_share,
            answer_sd=answer_sd,
            repeats=repeats,
            reviewer_spread=reviewer_spread,
            reviewer_position_spread=reviewer_position_spread,
            reviewer_verbosity_spread=reviewer_verbosity_spread,
            **{name: value for name, value in given.items() if value is not None},
        )
    except sim.SimulationConfigError as error:
        option = OPTION_FOR_FIELD.get(error.field)
        raise typer.BadParameter(str(error), param_hint=option and f"'{option}'") from None

    with ExitStack() as stack:
        truth_file = None if truth is None else stack.enter_context(_open(truth, "w", "--truth"))
        out = _open_output(stack, output, compress or output.endswith(".gz"))
        facts = sim.write_jsonl(config, out)
        if truth_file is not None:
            truth_file.write(json.dumps(facts, indent=2) + "\n")
    where = "stdout" if output == "-" else output
    typer.echo(f"wrote {facts['records']:,} records ({facts['sessions']:,} sessions) to {where}", err=True)


def _open(path: str | Path, mode: str, option: str) -> IO[Any]:
    """Open a file for writing, or fail as a usage error naming the option."""
    try:
        return open(path, mode)
    except OSError as error:
        raise typer.BadParameter(
            f"cannot write {path}: {error.strerror}; expected a writable file path",
            param_hint=f"'{option}'",
        ) from None


def _open_output(stack: ExitStack, output: str, compress: bool) -> IO[bytes]:
    """A binary stream for the records; gzip without a timestamp so output stays reproducible."""
    if output == "-":
        raw: IO[bytes] = sys.stdout.buffer
        stack.callback(raw.flush)
    else:
        raw = stack.enter_context(_open(output, "wb", "--output"))
    if not compress:
        return raw
    zipped = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0)
    return stack.enter_context(zipped)
