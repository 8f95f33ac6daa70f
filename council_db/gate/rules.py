"""The gate's rules: what each one bounds, read from a TOML file's ``[check]`` table and from
`council-db check`'s options. A value that cannot be a rule is a usage error naming the file,
the key and the fix, before any database is opened."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from council_db.analysis.stats.tiers import TIERS
from council_db.errors import UsageError

FDR = 0.05  # the report flags at q <= 0.05: a stricter alpha is possible, a looser one is not
ON = ("ci", "estimate")
FLAG_KINDS = ("reviewer_severity", "position", "verbosity", "self_preference", "trend", "change_point",
              "anomaly", "affinity", "anchoring", "below_ceiling")  # report.model.Flag's kinds
SHARES = ("agreement-min", "position-consistency-min", "stability-min")  # a floor on a share, 0 to 1
EFFECTS = ("severity-max", "length-max", "retest-max")  # a bound on |effect|, score points
RULES = ("no-flags", *SHARES, *EFFECTS, "min-sessions", "min-tier")
JUDGED_ON_CI = SHARES + EFFECTS  # the rules with a figure whose CI they can be judged on
DEFAULT_FILE = "council-db.toml"


@dataclass(frozen=True)
class Rule:
    name: str
    limit: float | int | str | None = None  # the floor, the bound, the sessions or the tier
    on: Literal["ci", "estimate"] = "ci"
    alpha: float = FDR  # no-flags: flags at q <= alpha
    kinds: tuple[str, ...] = ()  # no-flags: only these kinds (empty: all)
    reviewers: tuple[str, ...] = ()  # no-flags: only flags naming these reviewers (empty: all)

    def as_dict(self) -> dict[str, Any]:
        """What the rule says, as --format json writes it: only the keys that apply to it."""
        if self.name == "no-flags":
            return {"rule": self.name, "alpha": self.alpha, "kinds": list(self.kinds),
                    "reviewers": list(self.reviewers)}
        out: dict[str, Any] = {"rule": self.name, "limit": self.limit}
        if self.name in JUDGED_ON_CI:
            out["on"] = self.on
        return out


OPTION_OF = {"alpha": "--alpha", "kinds": "--flag-kind", "reviewers": "--flag-reviewer"}


@dataclass
class _Where:
    """Where a value came from, for the message: a file's ``check.<rule>.<key>``, or an option."""

    source: str  # the file, or the option
    keys: list[str] | None = None  # in a file: the keys down to the value

    def fail(self, problem: str, fix: str) -> UsageError:
        if self.keys is None:
            return UsageError(f"{self.source} {problem}: {fix}")
        return UsageError(f"{self.source}: {'.'.join(self.keys)} {problem}: {fix}")

    def at(self, key: str) -> _Where:
        if self.keys is None:
            return _Where(OPTION_OF.get(key, self.source))
        return _Where(self.source, [*self.keys, key])


def _limit(name: str, value: Any, where: _Where) -> float | int | str:
    """A rule's limit, checked for what it bounds."""
    if name == "min-tier":
        if value not in TIERS:
            raise where.fail(f"is {value!r}", f"give one of {', '.join(TIERS)}")
        return value
    if name == "min-sessions":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise where.fail(f"is {value!r}", "give a whole number of sessions, at least 1")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise where.fail(f"is {value!r}", "give a number")
    if name in SHARES and not 0 <= value <= 1:
        raise where.fail(f"is {value}", "give a share from 0 to 1")
    if name in EFFECTS and not value > 0:
        raise where.fail(f"is {value}", "give a bound above 0 (score points)")
    return float(value)


def _words(value: Any, allowed: tuple[str, ...] | None, where: _Where) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise where.fail(f"is {value!r}", 'give a list of strings, e.g. ["a", "b"]')
    wrong = [v for v in value if allowed is not None and v not in allowed]
    if wrong:
        raise where.fail(f"names {', '.join(wrong)}", f"the kinds are {', '.join(allowed or ())}")
    return tuple(value)


def _no_flags(table: dict[str, Any], where: _Where) -> Rule:
    rule = Rule("no-flags")
    for key, value in table.items():
        if key == "alpha":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= FDR:
                raise where.at(key).fail(f"is {value!r}", f"give a q-value above 0 and at most {FDR} "
                                                          "(the report flags at q <= 0.05)")
            rule = replace(rule, alpha=float(value))
        elif key in ("kinds", "reviewers"):
            allowed = FLAG_KINDS if key == "kinds" else None
            rule = replace(rule, **{key: _words(value, allowed, where.at(key))})
        else:
            raise where.at(key).fail("is not a key of no-flags", "its keys are alpha, kinds and reviewers")
    return rule


LIMIT_KEY = {**{name: "floor" for name in (*SHARES, "min-sessions", "min-tier")},
             **{name: "bound" for name in EFFECTS}}


def _bounded(name: str, value: Any, where: _Where) -> Rule:
    """A rule with a limit: ``name = 0.7``, or a table ``{floor = 0.7, on = "estimate"}``."""
    if not isinstance(value, dict):
        return Rule(name, _limit(name, value, where))
    key = LIMIT_KEY[name]
    allowed = (key, "on") if name in JUDGED_ON_CI else (key,)
    for extra in set(value) - set(allowed):
        raise where.at(extra).fail(f"is not a key of {name}", f"its keys are {' and '.join(allowed)}")
    if key not in value:
        raise where.at(key).fail("is missing", f"give {name}'s {key}")
    rule = Rule(name, _limit(name, value[key], where.at(key)))
    if "on" in value:
        if value["on"] not in ON:
            raise where.at("on").fail(f"is {value['on']!r}", 'give "ci" or "estimate"')
        rule = replace(rule, on=value["on"])
    return rule


def from_table(table: Any, source: str) -> list[Rule]:
    """The rules of a ``[check]`` table, in the order they are written."""
    where = _Where(source, ["check"])
    if not isinstance(table, dict):
        raise where.fail("is not a table", "write the rules under a [check] table")
    rules = []
    for name, value in table.items():
        if name not in RULES:
            raise where.at(name).fail("is not a rule", f"the rules are {', '.join(RULES)}")
        if name != "no-flags":
            rules.append(_bounded(name, value, where.at(name)))
        elif value is True or isinstance(value, dict):
            rules.append(_no_flags(value if isinstance(value, dict) else {}, where.at(name)))
        elif value is not False:
            raise where.at(name).fail(f"is {value!r}", "give true, false or a table of alpha, kinds and reviewers")
    return rules


def from_file(path: Path, *, required: bool) -> list[Rule]:
    """A TOML file's rules; a file without a ``[check]`` table has none unless ``required``."""
    import tomllib

    try:
        with path.open("rb") as file:
            document = tomllib.load(file)
    except OSError as error:
        raise UsageError(f"cannot read the rules file {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{path} is not TOML: {error}; fix that line") from None
    if "check" not in document:
        if required:
            raise UsageError(f"{path} has no [check] table: write the rules under [check] (docs/commands.md)")
        return []
    return from_table(document["check"], str(path))


def merged(from_file_rules: list[Rule], from_options: list[Rule], on: str | None) -> list[Rule]:
    """The file's rules with the options' rules in place of any of the same name; ``on`` (the
    --on option) judges every CI rule given as an option on it. No rule at all: no-flags."""
    given = {rule.name for rule in from_options}
    rules = [rule for rule in from_file_rules if rule.name not in given] + from_options
    if on is not None:
        rules = [replace(rule, on=on) if rule.name in JUDGED_ON_CI and rule.name in given else rule
                 for rule in rules]
    return rules or [Rule("no-flags")]


def option_rule(name: str, value: Any, option: str) -> Rule:
    """The rule an option gives, its value checked as a file's would be."""
    return Rule(name, _limit(name, value, _Where(option)))


def no_flags_option(alpha: float | None, kinds: list[str], reviewers: list[str]) -> Rule:
    """--no-flags with --alpha, --flag-kind and --flag-reviewer."""
    table: dict[str, Any] = {"kinds": kinds, "reviewers": reviewers}
    if alpha is not None:
        table["alpha"] = alpha
    return _no_flags(table, _Where("--no-flags"))
