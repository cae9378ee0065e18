"""Which HE program a ``--model`` name means, in one place.

Why its own module: the program of the paper's stated inputs (``he_cnn_eva``) is built on the
program machinery of ``he_program``; choosing between them belongs to neither (``he_program``
importing ``he_cnn_eva`` would be a cycle).
"""

from __future__ import annotations

from cryptoffload.workloads.he_cnn_eva import PAPER_INPUTS_PROFILE, paper_inputs_program
from cryptoffload.workloads.he_cnn_fitted import PAPER_PROFILE, paper_calibrated_program
from cryptoffload.workloads.he_cnn_generated import generate_cnn
from cryptoffload.workloads.he_program import HEProgram, OpTime
from cryptoffload.workloads.he_trace import load_trace

#: ``--model`` names: the program built from the paper's stated inputs (the default), the one
#: whose phases are fitted to its Table 2, and the CNN generator; anything else is a trace file.
MODELS = ("paper", "fitted", "generated")
PAPER_MODEL, FITTED_MODEL, GENERATED_MODEL = MODELS


def load_model(model: str | None, op_time: OpTime, profile: str = PAPER_PROFILE,
               inputs_profile: str | None = None) -> HEProgram:
    """``None``/``"paper"``: the CNN built from the paper's stated inputs
    (``workloads/he_cnn_eva.py``); ``"fitted"``: the paper-calibrated program (phase shares
    fitted to Table 2, ``profile``); ``"generated"``: the CNN generator; anything else: a trace."""
    if model in (None, "", "paper"):
        return paper_inputs_program(inputs_profile or PAPER_INPUTS_PROFILE)
    if model == "fitted":
        return paper_calibrated_program(op_time, profile)
    if model == "generated":
        return generate_cnn()
    return load_trace(model)


__all__ = ["FITTED_MODEL", "GENERATED_MODEL", "MODELS", "PAPER_MODEL", "load_model"]
