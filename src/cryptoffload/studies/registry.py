"""The study registry: each study module registers itself with :func:`register_study`, and
everything that lists studies -- ``cryptoffload study NAME`` with its options, ``study list``,
``cryptoffload report`` and the tests -- reads this registry.

Why: studies used to be listed in three places (the package, one CLI command each, the
report's runners), and one new study missed the third list. Now adding a study is one
subpackage whose ``study.py`` has one decorator on its ``run(cfg) -> Sections`` (the frame,
:mod:`.frame`, does the rest): its options (flag, help, which config field they set and how the text is
converted), the paper it reproduces, and how the report runs it -- including runs that need
something produced earlier in the report (a measured profile, a recorded trace), which the
study asks its :class:`ReportContext` for.

Options are described here, not as typer objects, so the studies layer does not depend on the
CLI; ``cli/study.py`` turns them into typer options.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from cryptoffload.checks import Bound, parse_floats, parse_ints, split_list
from cryptoffload.errors import ConfigError
from cryptoffload.papers import Paper

if TYPE_CHECKING:  # the frame (and the report it writes) is imported when a study runs, not with the CLI
    from cryptoffload.report.result import StudyResult
    from cryptoffload.studies.frame import ProgressFn, Sections


@dataclass(frozen=True)
class Option:
    """One command-line option of a study. ``flag`` as typer writes it (``"--rates"``,
    ``"--measure/--no-measure"``); ``field`` the config field it sets; ``type`` the option's
    type (str, int, float, bool or Path). ``convert(flag, value)`` turns the value into the
    field's (raising :class:`ConfigError` naming the flag). An option left at ``None`` sets
    nothing, so the config's own default applies.

    ``bound``: the floor, ceiling and unit of a number (every ``int`` or ``float`` option, and
    every option converted by :func:`int_tuple` or :func:`floats`, must have one: :func:`register_study`
    refuses a study without); ``maximum`` lowers its ceiling for this option, ``allow_zero``
    admits 0 besides the range (default: the bound's). The text typed is
    read by the one grammar (:func:`cryptoffload.checks.parse_int`/``parse_float``) and checked
    against the bound where it enters (:meth:`parse`), before any config is built."""

    flag: str
    field: str
    type: type = str
    default: Any = None
    help: str = ""
    convert: Optional[Callable[[str, Any], Any]] = None
    bound: Optional[Bound] = None
    maximum: Optional[float] = None
    allow_zero: Optional[bool] = None

    @property
    def numeric(self) -> bool:
        """Whether the option holds numbers (and so needs a bound)."""
        return self.type in (int, float) or getattr(self.convert, "numbers", False)

    def parse(self, value: Any) -> Any:
        """The value typed (text) or defaulted, read and bounded: a number for an ``int`` or
        ``float`` option, the text unchanged for a list (its ``convert`` reads and bounds it)."""
        if self.bound is None or value is None or self.type not in (int, float):
            return value
        return self.bound.parse(self.flag, value, maximum=self.maximum, allow_zero=self.allow_zero)

    def converted(self, value: Any) -> Any:
        """``convert(flag, value)``; each number of a list checked against the bound."""
        out = self.convert(self.flag, value) if self.convert else value
        if self.bound is not None and self.type not in (int, float) and isinstance(out, (list, tuple)):
            for item in out:
                self.bound.check(self.flag, item, maximum=self.maximum, allow_zero=self.allow_zero)
        return out


def as_str(flag: str, value: Any) -> str:
    """``convert`` for a path option whose config field is a string."""
    return str(value)


def negated(flag: str, value: bool) -> bool:
    """``convert`` for a flag that turns a config field off (``--variable-time``)."""
    return not value


def int_tuple(flag: str, text: str) -> tuple[int, ...]:
    """``convert`` for comma-separated positive integers."""
    return tuple(parse_ints(flag, text))


def floats(flag: str, text: str) -> list[float]:
    """``convert`` for comma-separated decimal numbers."""
    return parse_floats(flag, text)


int_tuple.numbers = True  # type: ignore[attr-defined]
floats.numbers = True  # type: ignore[attr-defined]


def names(flag: str, text: str) -> list[str]:
    """``convert`` for comma-separated names (lower case)."""
    return [t.lower() for t in split_list(flag, text)]


@dataclass
class ReportContext:
    """What one ``cryptoffload report`` shares between the studies it runs: its settings, a
    log line printer, and artifacts made once and reused (:meth:`artifact`)."""

    out: Path
    full: bool = False
    seed: int = 1
    calibrate: bool = True
    log: Callable[[str], None] = print
    artifacts: dict[str, Any] = field(default_factory=dict)

    def artifact(self, key: str, make: Callable[["ReportContext"], Any]) -> Any:
        """``make(self)`` the first time ``key`` is asked for, the stored value afterwards."""
        if key not in self.artifacts:
            self.artifacts[key] = make(self)
        return self.artifacts[key]


@dataclass(frozen=True)
class ReportRun:
    """One run of a study in the report: its folder name and its config, built when the run
    starts (so an artifact it needs is made just before, and a failure to make it fails this
    run only)."""

    name: str
    config: Callable[[ReportContext], Any]


@dataclass(frozen=True)
class StudySpec:
    name: str
    module: str
    title: str
    summary: str
    paper: Paper
    config: type
    options: tuple[Option, ...]
    quick_help: str
    seed_help: Optional[str]
    report: Optional[Callable[["StudySpec"], Iterable[ReportRun]]]

    @property
    def help(self) -> str:
        """The command's help: what it does and the paper it reproduces."""
        return f"{self.summary} After {self.paper.cite()}."

    @property
    def listing(self) -> str:
        """The title with the paper it reproduces, as ``study list`` shows it; titles carry no
        citation of their own, so every study names its paper the same way, from ``PAPERS``."""
        return f"{self.title} ({self.paper.brief()})"

    def run(self, cfg: Any, out: str | Path, progress: Optional[ProgressFn] = None) -> Any:
        """The study's ``run`` in its frame (:class:`FramedRun`), looked up when called (so a
        test can replace it): the written :class:`~cryptoffload.report.result.StudyResult`."""
        return getattr(importlib.import_module(self.module), "run")(cfg, out, progress)

    def make_config(self, values: dict[str, Any]) -> Any:
        """The config from option values keyed by field (plus ``quick`` and ``seed``)."""
        kw: dict[str, Any] = {"quick": values["quick"]}
        if self.seed_help is not None:
            kw["seed"] = values["seed"]
        for opt in self.options:
            value = values.get(opt.field)
            if value is None:
                continue
            kw[opt.field] = opt.converted(opt.parse(value))
        return self.config(**kw)

    def default_config(self, ctx: ReportContext, **kw: Any) -> Any:
        """The config the report uses unless the study says otherwise: quick unless ``--full``,
        the report's seed (for studies with a ``--seed``)."""
        if self.seed_help is not None:
            kw.setdefault("seed", ctx.seed)
        return self.config(quick=not ctx.full, **kw)

    def report_runs(self) -> list[ReportRun]:
        if self.report is None:
            return [ReportRun(self.name, self.default_config)]
        return list(self.report(self))


class FramedRun:
    """A study's ``run(cfg) -> Sections`` inside the frame (:mod:`.frame`): called as
    ``run(cfg, out, progress=None)`` it validates ``cfg``, runs the study with ``progress`` as
    its progress context, assembles and writes the result and returns it; :attr:`sections` is
    the study's own function, its findings as values (what a test reads without writing files)."""

    def __init__(self, spec: StudySpec, sections: Callable[[Any], Sections]) -> None:
        self.spec = spec
        self.sections = sections
        functools.update_wrapper(self, sections)

    def __call__(self, cfg: Any, out: str | Path, progress: Optional[ProgressFn] = None) -> StudyResult:
        from cryptoffload.studies.frame import run_study

        return run_study(self.spec, self.sections, cfg, out, progress)


_REGISTRY: dict[str, StudySpec] = {}


def register_study(*, name: str, title: str, summary: str, paper: Paper, config: type,
                   options: Iterable[Option] = (), quick: str = "Reduced run.",
                   seed: Optional[str] = "Seed of the simulation (cryptography is never seeded).",
                   report: Optional[Callable[[StudySpec], Iterable[ReportRun]]] = None
                   ) -> Callable[[Callable[[Any], Sections]], FramedRun]:
    """Decorate a study module's ``run(cfg) -> Sections`` to register the study; the module's
    ``run`` becomes the study in its frame (:class:`FramedRun`: ``run(cfg, out, progress)``
    validates, runs, assembles and writes).

    ``quick`` is the help of ``--quick``; ``seed`` the help of ``--seed`` (None: the study has
    no seed option). ``report(spec)`` lists the study's runs in the report (default: one run,
    :meth:`StudySpec.default_config`)."""
    def decorate(run: Callable[[Any], Sections]) -> FramedRun:
        if len(inspect.signature(run).parameters) != 1:  # the frame owns out and progress
            raise ValueError(f"@register_study({name!r}): the study's run takes its settings only, run(cfg) -> "
                             "Sections (the frame writes into the folder and shows the progress)")
        if run.__name__ != "run":  # the runner calls the module's run(): decorating a helper would hide that
            raise ValueError(f"@register_study({name!r}) decorates the study's run(cfg), "
                             f"not {run.__name__}")
        spec = StudySpec(name=name, module=run.__module__, title=title, summary=summary, paper=paper,
                         config=config, options=tuple(options), quick_help=quick, seed_help=seed, report=report)
        known = _REGISTRY.get(name)
        if known is not None and known.module != spec.module:
            raise ValueError(f"study {name!r} registered twice ({known.module}, {spec.module})")
        unbounded = [o.flag for o in spec.options if o.numeric and o.bound is None]
        if unbounded:  # every number a user types has a floor and a ceiling in its unit
            raise ValueError(f"study {name!r}: numeric option(s) {', '.join(unbounded)} have no bound "
                             "(Option(..., bound=<a Bound of cryptoffload.checks>))")
        fields = [o.field for o in spec.options]
        if len(set(fields)) != len(fields) or {"quick", "seed", "out", "no_progress"} & set(fields):
            raise ValueError(f"study {name!r}: option fields must be unique and not quick/seed/out/no_progress")
        _REGISTRY[name] = spec
        return FramedRun(spec, run)
    return decorate


def registered() -> dict[str, StudySpec]:
    """The studies registered so far (see :func:`cryptoffload.studies.all_studies`)."""
    return dict(sorted(_REGISTRY.items()))


def unknown_study(name: str) -> ConfigError:
    return ConfigError(f"unknown study '{name}' (known: {', '.join(registered())})")
