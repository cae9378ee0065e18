"""Option values coerced by typer's own functions, without the pydantic adapter typer 0.29
builds around them.

Why: typer 0.29 turns every option's text into its value through a pydantic ``TypeAdapter``
built on first use. Importing pydantic and building the first adapter took 0.1 s of every
command line -- 8 % of a whole ``he-cnn infer`` call (issue 37's 1.5-s target) -- for options
that need none of it. Ours are of five kinds (``tests/cli/test_coercion.py`` counts them from
the app): bool flags (typer passes a bool through, yet builds the adapter first), numbers read by our own parser
(:class:`~.root.NumberParser`, typer's ``parser=``), text, paths, and lists of paths. For
numbers, text and paths the adapter only wraps a function typer itself provides: the parser,
``_parse_cli_str``, ``coerce_cli_path``. :class:`DirectRuntimeParam` calls the same function
and raises the same error (a ``ValueError`` from a parser becomes typer's ``BadParameter``
with pydantic's wording); every other kind -- lists, choices, dates, a kind a later option
brings -- keeps typer's own coercion, pydantic and all.

This reaches into typer's private modules, which is why typer is pinned exactly
(pyproject.toml), and why the test coerces text for every option of the app both ways and
wants the same value or the same error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import typer.core
from typer import _coercion
from typer._click.exceptions import BadParameter
from typer._click.utils import _escape_control_characters
from typer._param_types import coerce_cli_path, lenient_issubclass, routes_to_path

if TYPE_CHECKING:
    from typer._click import Context
    from typer.core import _TyperParameter

__all__ = ["DirectRuntimeParam", "install", "runtime_param"]

#: typer's own builder, for every kind this module does not take
_TYPER_BUILD: Callable[[_coercion.TypeDescriptor], _coercion.RuntimeParam] = _coercion.build_runtime_param

#: what pydantic prefixes to the message of an error raised inside a validator
_PYDANTIC_WORDING: dict[type[Exception], str] = {ValueError: "Value error, ", AssertionError: "Assertion failed, "}


def _parse_str(value: Any) -> str:
    from typer._adapters import _parse_cli_str  # noqa: PLC0415 -- _adapters imports pydantic at its top

    return _parse_cli_str(value)


@dataclass(frozen=True)
class DirectRuntimeParam(_coercion.RuntimeParam):
    """One option's coercion by the function typer's adapter would have called."""

    convert: Callable[[Any, "_TyperParameter", "Context"], Any]

    def _coerce_value(self, value: Any, param: "_TyperParameter", ctx: "Context") -> Any:
        try:
            return self.convert(value, param, ctx)
        except (ValueError, AssertionError) as exc:
            prefix = next(p for kind, p in _PYDANTIC_WORDING.items() if isinstance(exc, kind))
            raise BadParameter(_escape_control_characters(f"{prefix}{exc}"), ctx=ctx, param=param) from exc


def _text(value: Any, param: "_TyperParameter", ctx: "Context") -> str:
    if isinstance(value, str):
        return value
    if value is None:
        raise ValueError("None is not a valid string")
    return _parse_str(value)   # bytes and the rest: typer's rule (defined with pydantic's module)


def runtime_param(descriptor: _coercion.TypeDescriptor) -> _coercion.RuntimeParam:
    """The coercion of one option: direct for a parser, text, a flag's bool and a plain path;
    typer's for the rest."""
    info, annotation = descriptor.parameter_info, descriptor.annotation
    args = {"annotation": annotation, "parameter_info": info}
    if descriptor.file_annotation is not None or descriptor.is_list or descriptor.is_tuple:
        return _TYPER_BUILD(descriptor)
    if info.parser is not None:
        parser = info.parser
        return DirectRuntimeParam(**args, convert=lambda value, _p, _c: parser(value))
    if annotation is str:
        return DirectRuntimeParam(**args, convert=_text)
    if annotation is bool:   # typer builds a flag's coercion even when its value is None (unset)
        typers: list[_coercion.RuntimeParam] = []

        def flag(value: Any, param: "_TyperParameter", ctx: "Context") -> Any:
            if isinstance(value, bool):
                return value
            if not typers:    # text for a flag (an environment variable): typer's rule, built now
                typers.append(_TYPER_BUILD(descriptor))
            return typers[0]._coerce_value(value, param, ctx)
        return DirectRuntimeParam(**args, convert=flag)
    if routes_to_path(annotation, info) and lenient_issubclass(annotation, Path) and info.path_type is None:
        path_type: type[Path] = annotation

        def to_path(value: Any, param: "_TyperParameter", ctx: "Context") -> Any:
            text = path_type(value) if isinstance(value, str) else value
            return coerce_cli_path(text, info, path_type=path_type, param=param, ctx=ctx)
        return DirectRuntimeParam(**args, convert=to_path)
    return _TYPER_BUILD(descriptor)


def install() -> None:
    """Make typer build options' coercion with :func:`runtime_param` (once per process)."""
    typer.core.build_runtime_param = runtime_param
