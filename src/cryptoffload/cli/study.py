"""``cryptoffload study``: run one study (a paper reproduced and extended).

The ``study NAME`` commands are generated from the study registry (:mod:`cryptoffload.studies`):
each study's options become typer options, plus ``--quick``, ``--seed`` (where the study has
one), ``--out``, ``--tables``, ``--no-progress``, ``--quiet`` and ``--json`` (the result contract
on stdout instead of the findings). A study module is imported only when its command runs
(or when ``study --help`` / ``study list`` needs them all). A misspelt study name is answered
with the closest names.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

import typer
from typer._click import Command, Context  # typer 0.29 vendors click: its own classes, not click's

from cryptoffload.checks import SEED
from cryptoffload.cli.root import SuggestingGroup, console, number_parser, print_json, progress_bar, quiet_option, say

#: ``study NAME --tables`` and ``report --tables``: without it a command prints its findings and
#: where its files are (a study's tables run to hundreds of lines; its CSVs and the HTML report
#: hold them).
TABLES_HELP = "Also print every table (otherwise only the findings and where the files are)."

if TYPE_CHECKING:  # the registry is imported when a study command is built, not with the CLI
    from cryptoffload.studies.registry import StudySpec


def _run_study(spec: StudySpec, values: dict[str, Any]) -> None:
    """Build the config, run it in the study's frame with a progress bar (the frame validates the
    config first, so bad input fails before any bar or file), print the findings (and the tables
    with ``--tables``) and where they went: the same for every study."""
    from cryptoffload.report.tables import render_result

    from cryptoffload.io import check_output_folder

    out: Path = check_output_folder(values.pop("out"))
    no_progress: bool = values.pop("no_progress")
    tables: bool = values.pop("show_tables")
    as_json: bool = values.pop("as_json")
    values.pop("quiet")
    cfg = spec.make_config(values)
    with progress_bar(not no_progress) as prog:
        result = spec.run(cfg, out, prog)
    if as_json:
        print_json(result.to_contract())
    else:
        render_result(result, console, tables=tables)
    say(f"wrote {out}/result.json ({len(result.tables)} tables, {len(result.figures)} figures)")
    if not tables and not as_json and result.tables:
        say(f"tables: one CSV each in {out}/ (--tables prints them here)")


def _parameter(name: str, annotation: object, default: object, *flags: str, help: str,
               parser: Optional[Callable[[str], object]] = None) -> inspect.Parameter:
    """One keyword option of a generated command: its type (a class, or ``Optional`` of one) and
    typer's option, both handed to typer as they are."""
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                             default=typer.Option(default, *flags, help=help, parser=parser))


def _seed_default(config: type) -> object:
    """The study config's own default seed (``--seed`` shows it): its constructor's default."""
    return inspect.signature(config).parameters["seed"].default


def study_command(spec: StudySpec) -> Command:
    """The click command of one registered study."""
    params = [_parameter("quick", bool, False, "--quick", help=spec.quick_help)]
    if spec.seed_help is not None:
        params.append(_parameter("seed", int, _seed_default(spec.config), "--seed",
                                 help=spec.seed_help, parser=number_parser("--seed", SEED)))
    params.append(_parameter("out", Path, Path(f"out/{spec.name}"), "--out", help="Output folder."))
    for opt in spec.options:
        annotation = opt.type if opt.default is not None else Optional[opt.type]
        numeric = opt.bound is not None and opt.type in (int, float)
        params.append(_parameter(opt.field, annotation, opt.default, opt.flag, help=opt.help,
                                 parser=number_parser(opt.flag, opt.bound, opt.maximum, opt.allow_zero) if numeric
                                 else None))
    params.append(_parameter("show_tables", bool, False, "--tables", help=TABLES_HELP))
    params.append(_parameter("no_progress", bool, False, "--no-progress", help="No progress bar."))
    params.append(_parameter("as_json", bool, False, "--json", help="Print the result (result.json's contract) on "
                             "stdout as one JSON object instead of the findings."))
    params.append(inspect.Parameter("quiet", inspect.Parameter.KEYWORD_ONLY, annotation=bool, default=quiet_option()))

    def command(**values: Any) -> None:
        _run_study(spec, values)

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__doc__ = spec.help
    single = typer.Typer(add_completion=False)
    single.command(spec.name)(command)
    return typer.main.get_command(single)


class StudyGroup(SuggestingGroup):
    """``study``: ``list`` plus one generated command per registered study (a misspelt study
    name is answered with the closest registered names: ``study ridg`` -> did you mean 'ridge'?)."""

    def list_commands(self, ctx: Context) -> list[str]:
        from cryptoffload.studies import all_studies

        return [*super().list_commands(ctx), *all_studies()]

    def get_command(self, ctx: Context, cmd_name: str) -> Optional[Command]:
        fixed = super().get_command(ctx, cmd_name)
        if fixed is not None:
            return fixed
        from cryptoffload.errors import ConfigError
        from cryptoffload.studies import get_study

        try:
            spec = get_study(cmd_name)
        except ConfigError:
            return None  # click says "No such command" with the usage
        return study_command(spec)


app = typer.Typer(cls=StudyGroup, no_args_is_help=True, help="Run one study (a paper reproduced and extended).")


@app.command("list")
def study_list(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: each study's name, title and the "
                                 "paper it reproduces."),
) -> None:
    """List the available studies and the paper each reproduces."""
    from rich.markup import escape

    from cryptoffload.studies import all_studies

    if as_json:
        print_json({"studies": [{"name": name, "title": spec.title, "paper": spec.paper.cite()}
                                for name, spec in all_studies().items()]})
        return
    for name, spec in all_studies().items():
        console.print(f"[bold]{name}[/bold]  {escape(spec.listing)}")
