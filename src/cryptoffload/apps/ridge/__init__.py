"""Privacy-preserving ridge regression with only linearly homomorphic encryption.

The data-trading setting of Zhou and Hua (providers encrypt per-record ``(x x^T; y x)``, a
platform aggregates, a crypto service provider helps solve) with the solve step of Giacomelli,
Jha, Joye, Page and Yoon (ACNS 2018) instead of garbled circuits. The mathematics is in
:mod:`.params`, :mod:`.modular` and :mod:`.protocol`; the parties as processes over HTTP in
:mod:`.csp`, :mod:`.platform`, :mod:`.provider`, :mod:`.buyer` and :mod:`.demo`.
"""

from cryptoffload.apps.ridge.modular import ReconstructionError, SingularMatrixError, rational_reconstruct, solve_mod
from cryptoffload.apps.ridge.params import (
    RidgeParams,
    check_solve_key,
    check_upload_key,
    error_bound,
    required_solve_key_bits,
    solve_bounds,
    upload_layout,
)
from cryptoffload.apps.ridge.protocol import (
    UPLOAD_MODES,
    Aggregate,
    Aggregator,
    Csp,
    EncryptedSystem,
    TradingPlatform,
    MaskedSystem,
    MaskSecret,
    Provider,
    RidgeModel,
    RidgeResult,
    Upload,
    aggregate,
    recover_model,
    run_in_process,
)

__all__ = [
    "UPLOAD_MODES", "Aggregate", "Aggregator", "Csp", "EncryptedSystem", "TradingPlatform", "MaskSecret", "MaskedSystem",
    "Provider", "ReconstructionError", "RidgeModel", "RidgeParams", "RidgeResult", "SingularMatrixError", "Upload",
    "aggregate", "check_solve_key", "check_upload_key", "error_bound", "rational_reconstruct", "recover_model",
    "required_solve_key_bits", "run_in_process", "solve_bounds", "solve_mod", "upload_layout",
]
