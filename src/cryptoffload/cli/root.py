"""The root ``cryptoffload`` command, the consoles, the output helpers and the progress bar
every command group shares, and ``main()``, which turns user errors into one line.

User mistakes (bad options, profiles, traces) end with a one-line ``error: ...`` on stderr and
exit code 2, never a traceback; anything else is a bug and keeps its traceback.

Output, three kinds, three paths (issue 37: "three output styles mixed"):

* **data** another program reads (values, JSON) goes through :func:`print_data` /
  :func:`print_json`: straight to stdout, one item per line, never through rich, whose
  console wraps a line at its width -- on a pipe a 617-digit integer came out as four lines,
  and the next command read four numbers. ``--json`` (:func:`json_option`) on a command that
  prints results makes stdout one JSON document and nothing else.
* **status lines** ("wrote ...", "made new keys ...") and logs go to stderr (:func:`say`,
  :data:`err_console`), so stdout holds the data alone; ``--quiet`` (:func:`quiet_option`, or
  ``cryptoffload --quiet COMMAND``) silences them and every progress bar. Error lines are
  never silenced.
* **prose and tables** for people (findings, plans) go through :data:`console` on stdout.

Width: prose, tables and status lines follow ``COLUMNS`` when it is set, else the width of
the terminal that stdout, stderr or stdin is (``cmd | less`` in a terminal still fits it), else
:data:`PIPE_WIDTH` (logs: wide enough for a study's widest table). Error lines stay one line
whatever the width: the contract is "one ``error:`` line".

Conventions every command shares: ``-`` for standard input or output where a command reads or
writes a data file (:func:`is_stdio`, :func:`read_stdin`, :func:`write_stdout`; never for keys),
shell completion (``--install-completion``, ``--show-completion``), boolean flags shown as flags
in ``--help`` (:func:`_flags_take_no_value`), and a misspelt command answered with the closest
names (typer's suggestions; the study group adds its own, :mod:`.study`).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from types import EllipsisType
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, List, NoReturn, Optional

import typer
import typer.main
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from typer._click import Command, Context  # typer 0.29 vendors click: its own classes
from typer.core import TyperGroup

from cryptoffload import __version__
from cryptoffload.cli import coercion
from cryptoffload.errors import ConfigError, CryptoffloadError

if TYPE_CHECKING:   # imported where used: every command imports this module
    from cryptoffload.checks import Bound
    from cryptoffload.report.result import Table

#: The commands under the root, in the order ``--help`` lists them after ``version``: name ->
#: ``module:attribute``, a typer app (a command group) or a function (one command). Each module
#: is imported the first time a command line names it, not before: typer builds a command's
#: options when its group is built, and building all ten (the study group generates
#: one command per study) for every call cost ``he-cnn infer`` a tenth of a second (issue 37).
#: ``--help``, completion and a misspelt name list them all, and then import them all.
COMMANDS: dict[str, str] = {
    "report": "cryptoffload.cli.report:report",
    "study": "cryptoffload.cli.study:app",
    "paillier": "cryptoffload.cli.paillier:app",
    "calibrate": "cryptoffload.cli.calibrate:app",
    "trace": "cryptoffload.cli.trace:app",
    "plan": "cryptoffload.cli.plan:app",
    "he-cnn": "cryptoffload.cli.he_cnn:app",
    "ridge": "cryptoffload.cli.ridge:app",
    "tls": "cryptoffload.cli.tls:app",
    "dask": "cryptoffload.cli.dask:app",
}


class SuggestingGroup(TyperGroup):
    """A command group whose misspelt command is answered with the closest names among all it
    lists (typer suggests among the commands already built only)."""

    def resolve_command(self, ctx: Context, args: list[str]) -> tuple[Optional[str], Optional[Command], list[str]]:
        import difflib

        from typer._click.exceptions import UsageError

        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:
            if args and "Did you mean" not in exc.message:
                close = difflib.get_close_matches(args[0], self.list_commands(ctx), n=3)
                if close:
                    exc.message = f"{exc.message.rstrip('.')}. Did you mean {', '.join(repr(c) for c in close)}?"
            raise


class RootGroup(SuggestingGroup):
    """The root command: its own commands (``version``), then those of :data:`COMMANDS`, each
    built when first asked for."""

    def list_commands(self, ctx: Context) -> list[str]:
        return [*super().list_commands(ctx), *(name for name in COMMANDS if name not in self.commands)]

    def get_command(self, ctx: Context, cmd_name: str) -> Optional[Command]:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is None and cmd_name in COMMANDS:
            cmd = self.commands[cmd_name] = _build_command(cmd_name, COMMANDS[cmd_name])
        return cmd


def _build_command(name: str, target: str) -> Command:
    """The click command of one :data:`COMMANDS` entry, named ``name``."""
    import importlib

    module, _, attribute = target.partition(":")
    obj = getattr(importlib.import_module(module), attribute)
    if isinstance(obj, typer.Typer):
        cmd: Command = typer.main.get_group(obj)
    else:
        single = typer.Typer(add_completion=False)
        single.command(name)(obj)
        cmd = typer.main.get_command(single)
    cmd.name = name
    return cmd


app = typer.Typer(cls=RootGroup, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Run, simulate and plan the offload of cryptographic work onto accelerators.")

#: Width of prose and tables when neither COLUMNS nor any terminal says one (logs, CI): wide
#: enough for the widest study table (fpga-reconfig's Table 6) without folding its cells.
PIPE_WIDTH = 200
#: COLUMNS values taken as a width; anything else (0, "abc", 10**9) is ignored.
MIN_WIDTH, MAX_WIDTH = 20, 10_000

#: The name that means standard input or output in place of a data file's path.
STDIO = "-"


class _State:
    """What the root options set for one command line (reset by every invocation)."""

    quiet = False


_state = _State()


class StatusConsole(Console):
    """The stderr console of status lines, logs and progress bars: silent under ``--quiet``.
    Error lines do not pass here (:func:`_error_line` has its own console)."""

    def print(self, *objects: object, **kwargs: Any) -> None:
        if not _state.quiet:
            super().print(*objects, **kwargs)


def output_width() -> int:
    """The width prose and tables follow: ``COLUMNS``, else a terminal's, else
    :data:`PIPE_WIDTH` (see the module docstring)."""
    text = os.environ.get("COLUMNS", "").strip()
    if text.isascii() and text.isdigit() and MIN_WIDTH <= int(text) <= MAX_WIDTH:
        return int(text)
    for fd in (1, 2, 0):
        try:
            return max(MIN_WIDTH, os.get_terminal_size(fd).columns)
        except (OSError, ValueError):
            continue
    return PIPE_WIDTH


console = Console(width=output_width())
err_console: Console = StatusConsole(stderr=True, width=output_width())
_errors = Console(stderr=True, soft_wrap=True, width=output_width())  # error lines and warnings: never silenced


def _fit_consoles() -> None:
    """Set the consoles' width for this command line (``COLUMNS`` may have changed since the
    module was imported: a test's forked child, a long-lived process)."""
    width = output_width()
    console.width = width
    err_console.width = width
    _errors.width = width


def is_quiet() -> bool:
    """Whether ``--quiet`` was given: no status lines, no progress bars."""
    return _state.quiet


def _set_quiet(value: bool) -> bool:
    if value:
        _state.quiet = True
    return value


def quiet_option() -> Any:
    """``--quiet``/``-q`` of a command: no progress bar, no status lines on stderr (results and
    errors are still printed). Typed ``Any`` as ``typer.Option`` is."""
    return typer.Option(False, "--quiet", "-q", callback=_set_quiet,
                        help="No progress bars and no status lines (results and errors are still printed).")


def json_option(what: str = "the results") -> Any:
    """``--json`` of a command that prints results: stdout holds one JSON document (``what``)
    and nothing else."""
    return typer.Option(False, "--json", help=f"Print one JSON object on stdout: {what}.")


class NumberParser:
    """Reads one numeric option's text by the one grammar and checks it against its bound
    (a :class:`~cryptoffload.checks.Bound`), where the value enters: typer's own conversion
    reads ``1_000``, ``nan``, ``inf`` and ``1e400`` (as infinity). A refusal is a
    :class:`~cryptoffload.errors.ConfigError` naming the option, the range and the unit (one
    ``error:`` line, exit 2). The tests find every numeric option's bound through ``bound``."""

    def __init__(self, flag: str, bound: Bound, maximum: Optional[float] = None,
                 allow_zero: Optional[bool] = None) -> None:
        self.flag, self.bound, self.maximum, self.allow_zero = flag, bound, maximum, allow_zero

    def __call__(self, value: object) -> int | float | None:
        if value is None:
            return None
        return self.bound.parse(self.flag, value, maximum=self.maximum, allow_zero=self.allow_zero)


def number_parser(flag: str, bound: Bound | None, maximum: Optional[float] = None,
                  allow_zero: Optional[bool] = None) -> NumberParser:
    """The parser of a numeric option (see :class:`NumberParser`)."""
    if bound is None:   # a numeric option without a bound: a bug in its declaration
        raise ValueError(f"{flag}: a numeric option needs a bound (cryptoffload.checks)")
    return NumberParser(flag, bound, maximum, allow_zero)


def number_option(default: int | float | EllipsisType | None, flag: str, *, bound: Bound, help: str,
                  maximum: Optional[float] = None, allow_zero: Optional[bool] = None) -> Any:
    """A numeric typer option whose text is read by the one grammar and bounded (``bound``:
    a :class:`~cryptoffload.checks.Bound`; ``maximum`` lowers its ceiling; ``allow_zero``
    admits 0 besides the range). Typed ``Any`` as ``typer.Option`` is."""
    return typer.Option(default, flag, help=help, parser=number_parser(flag, bound, maximum, allow_zero))


def max_connections_option() -> Any:
    """``--max-connections`` of every server command (see :func:`set_server_limits`). Typed
    ``Any`` as ``typer.Option`` is: it stands as an ``int`` parameter's default."""
    from cryptoffload.checks import CONNECTIONS

    return number_option(0, "--max-connections", bound=CONNECTIONS, help="Connections held at once over all clients; "
                         "past it a new one is closed at once (0: half the open-file limit, at most 4096).")


def max_per_client_option() -> Any:
    """``--max-connections-per-client`` of every server command (typed as ``typer.Option`` is)."""
    from cryptoffload.checks import CONNECTIONS

    return number_option(32, "--max-connections-per-client", bound=CONNECTIONS, allow_zero=False,
                         help="Connections one client address may hold at once (raise it behind a reverse proxy, "
                         "where every client has the proxy's address).")


def set_server_limits(max_connections: int, max_per_client: int) -> None:
    """The servers this command starts accept at most these connections (checked now: a bad
    value is a one-line error before any key is made)."""
    from cryptoffload.apps import serving
    from cryptoffload.checks import check_int

    check_int("--max-connections", max_connections, minimum=0, maximum=1_000_000)
    check_int("--max-connections-per-client", max_per_client, maximum=1_000_000)
    serving.set_limits(serving.ServerLimits(max_connections=max_connections, max_per_client=max_per_client))


@contextmanager
def progress_bar(enabled: bool = True) -> Iterator[Callable[[int], Callable[[str], None]]]:
    """A rich progress bar handed to studies as ``progress(total) -> advance(label)``; none
    under ``--quiet``."""
    prog = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err_console, transient=False, disable=not enabled or _state.quiet)
    started = False

    def start(total: int) -> Callable[[str], None]:
        # The bar is drawn only once the work starts, so an input error found before that
        # (profile, trace, options) leaves stderr with its one error line and nothing else.
        nonlocal started
        if not started:
            prog.start()
            started = True
        task = prog.add_task("starting", total=total)

        def advance(label: str) -> None:
            prog.update(task, advance=1, description=label)
        return advance

    try:
        yield start
    except BaseException:
        # An error ends the command with its own message only: the bar is erased, not left
        # behind (a study may find bad input after its bar has started, e.g. reading a trace).
        if started:
            started = False
            prog.live.transient = True
            prog.live.stop()  # not prog.stop(): that adds a blank line on a pipe
        raise
    finally:
        if started:
            prog.stop()


def _reader_gone() -> NoReturn:
    """The reader closed the pipe (``... | head -1``): stop quietly with the status of a program
    ended by SIGPIPE, not a traceback; stdout points at /dev/null so the interpreter's last
    flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(141)


def print_data(lines: Iterable[str]) -> None:
    """Data for another program: each item one line on stdout, written exactly as given (no
    wrapping at any width or ``COLUMNS``, no markup, no colour). An item must not hold a newline:
    that would make one value read as two."""
    try:
        out = sys.stdout
        for line in lines:
            if "\n" in line or "\r" in line:
                raise ValueError("print_data: an item holds a line break")  # a bug in the caller
            out.write(line + "\n")
        out.flush()
    except BrokenPipeError:
        _reader_gone()


def print_json(obj: object) -> None:
    """One JSON document on stdout (indented, plain: no colour codes, no wrapping), for
    ``json.loads`` or ``jq``. Integers that can pass 2^53 are best given as decimal strings by
    the caller: many JSON readers (JavaScript, jq before 1.7) round larger numbers."""
    print_data(json.dumps(obj, indent=2, default=str).split("\n"))


def print_tables_json(tables: Iterable[Table], notes: Iterable[str] = (), **fields: object) -> None:
    """``--json`` of a command that prints tables (:class:`~cryptoffload.report.result.Table`):
    one JSON object, ``{"tables": {id: contract}, "notes": [...], **fields}`` -- the same table
    shape as a study's ``result.json``."""
    from cryptoffload.io import json_safe

    print_json({"tables": {t.id: t.to_contract() for t in tables}, "notes": list(notes), **json_safe(fields)})


def say(message: str) -> None:
    """A status line ("wrote ...") of a command that prints data: on stderr, so stdout holds
    the data alone; folded at the output width; nothing under ``--quiet``."""
    err_console.print(message, markup=False, highlight=False)


def warn(message: str) -> None:
    """A warning, or one part of a command that failed while the rest went on (a study of the
    report): on stderr, folded at the output width, printed even under ``--quiet``."""
    _errors.print(message, markup=False, highlight=False, soft_wrap=False)


# -- "-" for standard input and output -----------------------------------------------------------


def is_stdio(path: object) -> bool:
    """Whether a data file's path is ``-`` (standard input or output; a file named ``-`` is
    ``./-``)."""
    return str(path) == STDIO


def read_stdin(flag: str, what: str, *, max_bytes: int, error: type[CryptoffloadError] = ConfigError) -> bytes:
    """Everything on standard input for ``flag -`` (``what``: "integers"), at most
    ``max_bytes``; a terminal on standard input is refused (a command would wait for typing it
    never announced), and so is more than ``max_bytes``."""
    stream = sys.stdin
    if stream is None or stream.isatty():
        raise error(f"{flag} -: standard input is a terminal; pipe the {what} in (... | cryptoffload ...) or give a "
                    f"file to {flag}")
    data = stream.buffer.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise error(f"{flag} -: standard input holds more than {max_bytes:,} bytes, the most {what} read at once")
    return data


def check_binary_stdout(flag: str) -> None:
    """``flag -`` writes binary data: refused on a terminal (it would print bytes a terminal
    interprets), before any work is done."""
    if sys.stdout.isatty():
        raise ConfigError(f"{flag} -: standard output is a terminal, where binary ciphertexts would be garbage; "
                          f"redirect it (> file, | command) or give a file to {flag}")


def write_stdout(data: bytes) -> None:
    """Binary data on standard output, all of it, flushed (``--out -``)."""
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        _reader_gone()


# -- help and completion -------------------------------------------------------------------------


def _flags_take_no_value() -> None:
    """typer 0.29's rich help prints a type after every option, ``--quick <bool>`` and ``--in
    <list[Path]>`` included, as if a flag took a value (its plain help does not): a flag shows
    no type, a repeatable option the type of one value. Set once, on typer's option class,
    because flags are made in every command group and for every study."""
    from typer._click import Context  # typer 0.29 vendors click: its own classes
    from typer.core import TyperOption

    if getattr(TyperOption.display_type_rich, "_cryptoffload", False):
        return
    shown = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: Context) -> Optional[str]:
        if getattr(self, "is_flag", False) and not getattr(self, "count", False):
            return None
        text = shown(self, ctx)
        if text is not None and text.startswith("<list[") and text.endswith("]>"):
            return f"<{text[6:-2].lower()}>"
        return text

    display_type_rich._cryptoffload = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_take_no_value()
coercion.install()


@app.command()
def version(as_json: bool = typer.Option(False, "--json", help="Print one JSON object: the version.")) -> None:
    """Print the package version."""
    if as_json:
        print_json({"version": __version__})
    else:
        print_data([__version__])


def _print_version(value: bool) -> None:
    """``--version`` is eager: it answers before any subcommand is parsed or required."""
    if value:
        console.print(__version__)
        raise typer.Exit()


@app.callback()
def root(
    show_version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                      help="Print the package version and exit (the same as `cryptoffload version`)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="For every command: no progress bars and no status "
                               "lines (results and errors are still printed)."),
) -> None:
    """Options of the root command itself; the commands under it are :data:`COMMANDS`."""
    _state.quiet = quiet
    _fit_consoles()  # also for a caller of ``app`` that bypasses main() (typer's CliRunner)


def _error_line(message: str) -> None:
    # One line whatever the terminal width or the message: no wrapping, no embedded newlines.
    message = " ".join(message.split())
    _errors.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)


def main(argv: Optional[List[str]] = None) -> None:
    """Entry point: user errors -- ours and typer's usage errors (unknown option, a value that
    does not parse, a missing option) -- become one ``error:`` line and exit 2; anything else is
    a bug: its traceback, then how to report it (exit 1)."""
    # typer vendors click; its exception classes are only importable from there (typer pinned)
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

    _state.quiet = False
    _fit_consoles()
    try:
        rv = app(args=argv, prog_name="cryptoffload", standalone_mode=False)
    except CryptoffloadError as exc:
        _error_line(str(exc))
        sys.exit(2)
    except NoArgsIsHelpError:
        sys.exit(2)  # the group's help was printed (typer's convention: exit 2)
    except UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "cryptoffload"
        _error_line(f"{where}: {exc.format_message()} (see '{where} --help')")
        sys.exit(exc.exit_code)
    except ClickException as exc:
        _error_line(exc.format_message())
        sys.exit(exc.exit_code)
    except typer.Abort:
        _errors.print("Aborted.", markup=False, highlight=False)
        sys.exit(1)
    except Exception:
        traceback.print_exc()
        _errors.print(f"internal error: this is a bug in cryptoffload {__version__}, not a mistake in your "
                      f"input; please report it with the command line and the traceback above.",
                      markup=False, highlight=False, soft_wrap=True)
        sys.exit(1)
    if isinstance(rv, int) and rv:  # typer.Exit(code) in non-standalone mode comes back as a value
        sys.exit(rv)
