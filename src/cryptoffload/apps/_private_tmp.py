"""The folder a server keeps its secrets in: the one the user named, or an owned temporary one.

Why here: ``ridge csp`` (``--key-dir``), ``ridge platform`` and ``he-cnn serve`` (``--token-dir``)
all either keep their tokens, keys and TLS key in a folder the user named (kept) or, without
one, in a :func:`cryptoffload.owned_tmp.owned_temp_dir` removed when the server stops (and by
the next start when it was killed).
"""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from cryptoffload.owned_tmp import owned_temp_dir
from cryptoffload.private_files import private_dir


@contextmanager
def secrets_folder(folder: Path | None, what: str, prefix: str) -> Iterator[Path]:
    """The folder a server keeps its secrets in: ``folder`` (made private, kept) when the user
    named one, else a new :func:`owned_temp_dir` removed when the server stops. Either passes
    the rule of :mod:`cryptoffload.private_files` (ours, 0700, not a link, under folders only we
    or root can write), or the server does not start."""
    path = private_dir(folder, what) if folder is not None else owned_temp_dir(prefix)
    try:
        yield path
    finally:
        if folder is None:
            shutil.rmtree(path, ignore_errors=True)
