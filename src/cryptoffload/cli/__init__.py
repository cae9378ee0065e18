"""The ``cryptoffload`` command line (typer + rich): one module per command group, no domain
logic (each command parses its options, calls the layer below and prints what came back).

``main`` is the entry point (``[project.scripts]`` and ``python -m cryptoffload.cli``); ``app``
is the root typer app. Its commands are :data:`.root.COMMANDS` (one table, in the order
``--help`` lists them), each module imported only when a command line names it.
Modules: :mod:`.root` (the root command, ``--version``, consoles, the progress bar, the
servers' connection options), :mod:`.study` (one command per registered study, generated
from the registry), :mod:`.report`, :mod:`.plan`, :mod:`.calibrate`, :mod:`.trace`,
:mod:`.paillier`, :mod:`.he_cnn`, :mod:`.ridge`, :mod:`.tls`, :mod:`.dask`. Errors: a
``CryptoffloadError`` is one ``error:`` line and exit 2 (``root.main``); anything else keeps
its traceback. Output and conventions (``--json``, ``--quiet``, ``-`` for standard input and
output, the width, completion, flags in ``--help``) are :mod:`.root`'s, shared by every group;
the same operations for Python programs are ``cryptoffload.api`` (docs/api.md).
"""

from __future__ import annotations

from cryptoffload.cli.root import app, console, err_console, main, progress_bar

__all__ = ["app", "console", "err_console", "main", "progress_bar"]
