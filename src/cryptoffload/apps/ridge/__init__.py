"""Privacy-preserving ridge regression with only linearly homomorphic encryption.

Seed 003's data-trading setting (providers encrypt per-record ``(x x^T; y x)``, a platform
aggregates, a crypto service provider helps solve) with the solve step of Giacomelli, Jha,
Joye, Page and Yoon (ACNS 2018) instead of garbled circuits. See :mod:`.protocol`.
"""

from cryptoffload.apps.ridge.protocol import (
    MODES,
    Aggregate,
    Aggregator,
    Csp,
    EncryptedSystem,
    MaskedSystem,
    MaskSecret,
    Platform,
    Provider,
    ReconstructionError,
    RidgeModel,
    RidgeParams,
    RidgeResult,
    SingularMatrixError,
    Upload,
    aggregate,
    check_solve_key,
    check_upload_key,
    error_bound,
    rational_reconstruct,
    recover_model,
    required_solve_key_bits,
    run_in_process,
    solve_bounds,
    solve_mod,
    upload_layout,
)

__all__ = [
    "MODES", "Aggregate", "Aggregator", "Csp", "EncryptedSystem", "MaskSecret", "MaskedSystem", "Platform",
    "Provider", "ReconstructionError", "RidgeModel", "RidgeParams", "RidgeResult", "SingularMatrixError", "Upload",
    "aggregate", "check_solve_key", "check_upload_key", "error_bound", "rational_reconstruct", "recover_model",
    "required_solve_key_bits", "run_in_process", "solve_bounds", "solve_mod", "upload_layout",
]
