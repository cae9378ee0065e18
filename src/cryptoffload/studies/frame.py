"""The study frame: what every study's run shares, written once.

Why: each study used to repeat the same frame around its findings -- validate the config,
start a clock, size a progress bar, build a ``StudyResult`` with the machine's description, add
tables and claims to it through helpers that took the result, time it and write it. Now a
study's ``run(cfg)`` returns its findings as values (:class:`Sections`) and
:meth:`~cryptoffload.studies.registry.StudySpec.run` does the rest, the same way for every study
(:func:`frame`): validation first (bad input fails before any progress bar or file), timing,
machine information, the progress bar as a context (:func:`expect`, :func:`step`: a study asks
for it where it needs it, no callback is threaded through its signatures), the result assembled
from the sections and written by the one writer (:func:`cryptoffload.report.result.write_result`).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Protocol, Sequence, TypeVar

from cryptoffload import __version__
from cryptoffload.machine import machine_info
from cryptoffload.report.result import Claim, StudyResult, Table, write_result
from cryptoffload.report.verdicts import Verdict
from cryptoffload.studies.verdicts import add_verdicts

if TYPE_CHECKING:
    from cryptoffload.studies.registry import StudySpec

#: ``progress(total) -> advance(label)``, as the CLI's progress bar hands it to a study's run.
ProgressFn = Callable[[int], Callable[[str], None]]


class StudyConfig(Protocol):
    """What the frame needs of every study's settings (a keyword-only dataclass)."""

    quick: bool
    seed: int

    def validate(self) -> None: ...


C = TypeVar("C", bound=StudyConfig)

#: A figure: its file name and what draws it into a path.
Figure = tuple[str, Callable[[Path], None]]


@dataclass(frozen=True)
class ClaimOnly:
    """A claim the headline does not repeat as a sentence of its own (a line of the study's
    beside it says it in other words)."""

    claim: Claim


#: One entry of a headline, in order: a line, a claim (and its sentence), or a claim alone.
HeadlineEntry = str | Claim | ClaimOnly


@dataclass
class Sections:
    """What one run of a study found, as values; the frame makes the :class:`StudyResult` of it.

    ``headline`` reads in order: a :class:`Claim` is a claim (and its sentence a headline line),
    a string a line of its own, a :class:`ClaimOnly` a claim without a line. ``verdicts``: a verdict for every cell beside a paper value;
    the frame adds their table and puts the scoreboard first in the headline."""

    tables: list[Table] = field(default_factory=list)
    headline: list[HeadlineEntry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)
    fits: dict[str, str] = field(default_factory=dict)
    extra: dict[str, object] = field(default_factory=dict)
    key_figure: str = ""
    paper: str = ""  # the result's paper line where it says more than the registered citation

    def table(self, table_id: str) -> Table:
        """A table found so far, by id."""
        for t in self.tables:
            if t.id == table_id:
                return t
        raise KeyError(table_id)

    @property
    def by_id(self) -> dict[str, Table]:
        """The tables found so far, by id (what a verdict reads its cells from)."""
        return {t.id: t for t in self.tables}


class _Run:
    """The run under way: its progress, sized once by the study (:func:`expect`) and advanced by
    :func:`step` (without a bar -- a test, the Python API -- both do nothing), and the folder
    its result goes to (:func:`folder`)."""

    def __init__(self, make: ProgressFn | None, out: Path | None) -> None:
        self.make = make
        self.out = out
        self.advance: Callable[[str], None] | None = None

    def expect(self, total: int) -> None:
        if self.make is not None:
            self.advance = self.make(total)

    def step(self, label: str) -> None:
        if self.advance is not None:
            self.advance(label)


_CURRENT: ContextVar[_Run] = ContextVar("study_run", default=_Run(None, None))


def expect(total: int) -> None:
    """Size the progress bar of the run under way: ``total`` calls of :func:`step` will follow."""
    _CURRENT.get().expect(total)


def step(label: str) -> None:
    """One step of the run under way done; ``label`` says what runs next."""
    _CURRENT.get().step(label)


def shown() -> bool:
    """Whether the run under way shows progress (a study hands lower layers their own bars only then)."""
    return _CURRENT.get().make is not None


def folder() -> Path:
    """The folder the run under way writes its result to, for what a study measures into a file
    of its own on the way (a calibrated profile); made when asked for."""
    out = _CURRENT.get().out
    if out is None:
        raise RuntimeError("frame.folder() is asked for outside a study's run")
    out.mkdir(parents=True, exist_ok=True)
    return out


@contextmanager
def running(make: ProgressFn | None, out: str | Path | None = None) -> Iterator[None]:
    """Run the body as a study's run: ``make`` is the progress bar of :func:`expect` and
    :func:`step`, ``out`` the folder of :func:`folder`."""
    token = _CURRENT.set(_Run(make, None if out is None else Path(out)))
    try:
        yield
    finally:
        _CURRENT.reset(token)


@contextmanager
def quiet() -> Iterator[None]:
    """Run the body without advancing the progress bar (work the bar did not count, such as a
    band's re-simulations of a table)."""
    token = _CURRENT.set(_Run(None, _CURRENT.get().out))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def run_study(spec: "StudySpec", sections: Callable[[C], Sections], cfg: C, out: str | Path,
              make_progress: ProgressFn | None = None) -> StudyResult:
    """The frame around one run: validate ``cfg`` (bad input fails before any bar or file), run
    ``sections(cfg)`` with ``make_progress`` as the progress context, time it, assemble the
    result with this machine's description and write it into ``out`` (nothing half-written)."""
    cfg.validate()
    started = time.perf_counter()
    with running(make_progress, out):
        found = sections(cfg)
        result = assemble(spec, cfg, found)
        step("writing results")
        result.elapsed_s = time.perf_counter() - started
        write_result(result, out, found.figures)
    return result


def assemble(spec: "StudySpec", cfg: StudyConfig, found: Sections) -> StudyResult:
    """The :class:`StudyResult` of a run's sections: the study's name, title and paper from its
    registration, the mode and seed from its settings, the version and the machine here; the
    headline in the study's order, after the scoreboard of its verdicts (with their table)."""
    result = StudyResult(spec.name, spec.title, "quick" if cfg.quick else "full", cfg.seed, __version__,
                         machine_info(), profiles=list(found.profiles), notes=list(found.notes),
                         paper=found.paper or spec.paper.cite(), extra=dict(found.extra), fits=dict(found.fits),
                         key_figure=found.key_figure)
    for table in found.tables:
        result.add(table)
    add_headline(result, found.headline)
    add_verdicts(result, found.verdicts)
    return result


def add_headline(result: StudyResult, entries: Sequence[HeadlineEntry]) -> None:
    """Headline entries into ``result``, in order: a line, a claim with its sentence, a claim alone."""
    for line in entries:
        if isinstance(line, Claim):
            result.claim(line)
        elif isinstance(line, ClaimOnly):
            result.claims.append(line.claim)
        else:
            result.headline.append(line)


__all__ = ["ClaimOnly", "Figure", "HeadlineEntry", "ProgressFn", "Sections", "StudyConfig", "add_headline", "assemble",
           "expect", "folder", "quiet", "run_study", "running", "shown", "step"]
