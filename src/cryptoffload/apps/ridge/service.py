"""Transitional: the names the command line imports, until its ridge commands move to
``cli/ridge.py`` and import the party modules (:mod:`.csp`, :mod:`.platform`,
:mod:`.provider`, :mod:`.buyer`, :mod:`.demo`) directly."""

from cryptoffload.apps.ridge.buyer import run_buyer
from cryptoffload.apps.ridge.csp import serve_csp
from cryptoffload.apps.ridge.demo import run_demo
from cryptoffload.apps.ridge.platform import serve_platform
from cryptoffload.apps.ridge.provider import parse_part, run_provider
from cryptoffload.apps.ridge.tokens import TOKEN_ENV, read_buyer_token

__all__ = ["TOKEN_ENV", "parse_part", "read_buyer_token", "run_buyer", "run_demo", "run_provider", "serve_csp",
           "serve_platform"]
