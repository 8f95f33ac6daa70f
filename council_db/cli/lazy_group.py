"""A typer group that builds only the command it runs.

typer turns every command of a group into click parameters (its signature, its type hints,
an object per option) before it reads the command line: for council-db's 27 commands that
was ~25 ms, a quarter of `council-db --help`. A lazy group names its commands as "module:attribute"
(a command function, or a typer.Typer sub-app); a command's module is imported and its
parameters built only when that command runs or shows its help. The group's own help lists
the commands with none of them built: from summaries given with the group (the first sentence
of each command's help, all that a listing shows), so their modules need not be imported
either, or else from their docstrings.

Options every command takes (``shared``: council-db's --db) are added to each command as it
is built, so they work after the command's name too, at any depth. Building also gives every
parameter a metavar as a person writes it (N, X, FILE, table|json) where typer would show
Python's types (<int range>, <str>) or put an argument in {braces}; a number option refuses
"nan" as a usage error (click takes it as a float, which no analysis can use); the list options a
command marks with ``pairs`` take two values each (-p NAME VALUE), which typer cannot declare.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Callable

import typer
from typer._click import types
from typer.core import TyperArgument, TyperCommand, TyperGroup
from typer.main import get_command_from_info, get_group
from typer.models import CommandInfo

if TYPE_CHECKING:
    from typer._click import Command, Parameter

SharedOption = Callable[[], "Parameter"]


def lazy_group(commands: dict[str, str], summaries: dict[str, str] | None = None,
               shared: tuple[SharedOption, ...] = ()) -> type[TyperGroup]:
    """The group class for typer.Typer(cls=...) whose commands are ``commands``: name ->
    "module:attribute", listed in this order; ``summaries``: name -> the first sentence of
    the command's help, for the listing (tests/cli/test_startup.py checks they agree);
    ``shared``: makers of the options every command (and the group) takes besides its own."""
    return type("LazyGroup", (LazyGroup,), {"lazy": commands, "summaries": summaries or {}, "shared": shared})


class LazyGroup(TyperGroup):
    lazy: dict[str, str] = {}
    summaries: dict[str, str] = {}
    shared: tuple[SharedOption, ...] = ()

    def __init__(self, *, commands: dict[str, Command] | None = None, **attrs: Any) -> None:
        super().__init__(**attrs)
        # Commands typer built itself (registered with app.command()) stand beside the lazy ones.
        self.commands = LazyCommands(self.lazy, dict(commands or {}), self.summaries, self.rich_markup_mode,
                                     self.shared)
        _add_shared(self, self.shared)

    def format_commands(self, ctx: typer.Context, formatter: Any) -> None:
        """TyperGroup's listing, given outlines (name and help) instead of built commands."""
        outlines = {name: self.commands.outline(name) for name in self.commands}
        TyperGroup(commands=outlines, rich_markup_mode=self.rich_markup_mode).format_commands(ctx, formatter)


class LazyCommands(Mapping[str, "Command"]):
    """Command name -> click command, each built on its first look-up."""

    def __init__(self, lazy: dict[str, str], built: dict[str, Command], summaries: dict[str, str],
                 rich_markup_mode: Any, shared: tuple[SharedOption, ...] = ()) -> None:
        self._lazy = lazy
        self._built = built
        self._summaries = summaries
        self._rich_markup_mode = rich_markup_mode
        self._shared = shared

    def __iter__(self) -> Iterator[str]:
        yield from self._built
        yield from (name for name in self._lazy if name not in self._built)

    def __len__(self) -> int:
        return len(self._built.keys() | self._lazy.keys())

    def __getitem__(self, name: str) -> Command:
        if name not in self._built:
            target = _attribute(self._lazy[name])
            if isinstance(target, typer.Typer):
                self._built[name] = get_group(target)
            else:
                info = CommandInfo(name=name, callback=target)
                # pretty_exceptions_short: typer's default; council-db shows no pretty exceptions.
                self._built[name] = get_command_from_info(info, pretty_exceptions_short=True,
                                                          rich_markup_mode=self._rich_markup_mode)
            _add_shared(self._built[name], self._shared)
            for param in self._built[name].params:
                _plain_metavar(param)
                if isinstance(param.type, types.FloatParamType) and param.callback is None:
                    param.callback = _not_nan
                if param.name in getattr(target, "pair_options", ()):
                    param.nargs = 2
        return self._built[name]

    def outline(self, name: str) -> Command:
        """The command if built, else a stand-in with its summary (or its docstring) and no
        parameters: enough for a listing. A sub-app without a summary is built."""
        if name in self._built:
            return self._built[name]
        summary = self._summaries.get(name)
        if summary is None:
            target = _attribute(self._lazy[name])
            if isinstance(target, typer.Typer):
                return self[name]
            summary = inspect.getdoc(target)
        return TyperCommand(name, help=summary, rich_markup_mode=self._rich_markup_mode)


def _not_nan(_ctx: Any, _param: Any, value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        raise typer.BadParameter("nan is not a number this option can use")
    return value


def pairs(*names: str) -> Callable[[Any], Any]:
    """Mark a command's list options ``names`` as taking two values each: the command gets
    them as (first, second) tuples."""
    def mark(function: Any) -> Any:
        function.pair_options = names
        return function
    return mark


def _add_shared(command: Command, shared: tuple[SharedOption, ...]) -> None:
    """Each shared option, once, before the command's help option (a sub-group's own may already have it)."""
    names = {name for param in command.params for name in param.opts}
    for make in shared:
        option = make()
        if not names & set(option.opts):
            command.params.append(option)


class PlainArgument(TyperArgument):
    """An argument shown as NAME, [NAME] when optional, NAME... when repeated (typer: {name})."""

    def make_metavar(self, ctx: Any, *, usage: bool = False) -> str:
        shown = (self.metavar or (self.name or "").upper()) + ("..." if self.nargs != 1 else "")
        return f"[{shown}]" if usage and not self.required else shown


def _plain_metavar(param: Parameter) -> None:
    """A metavar for a parameter declared without one: its name for an argument, else from its type."""
    if isinstance(param, TyperArgument):
        param.__class__ = PlainArgument
        return
    if param.metavar is not None or getattr(param, "is_flag", False) or getattr(param, "count", False):
        return
    kind = param.type
    if isinstance(kind, types.IntParamType):
        param.metavar = "N"
    elif isinstance(kind, types.FloatParamType):
        param.metavar = "X"
    elif hasattr(kind, "choices"):
        param.metavar = "|".join(str(getattr(choice, "value", choice)) for choice in kind.choices)
    elif kind.name in ("file", "path", "directory"):
        param.metavar = kind.name.upper()
    else:
        param.metavar = (param.name or "value").upper()


def _attribute(reference: str) -> Any:
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)
