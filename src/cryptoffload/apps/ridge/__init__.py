"""Privacy-preserving ridge regression with only linearly homomorphic encryption.

The data-trading setting of Zhou and Hua (providers encrypt per-record ``(x x^T; y x)``, a
platform aggregates, a crypto service provider helps solve) with the solve step of Giacomelli,
Jha, Joye, Page and Yoon (ACNS 2018) instead of garbled circuits. Threat model and protocol:
``docs/apps/ridge.md``.

* The mathematics, no I/O: :mod:`.params` (slot sizes, guard bits, the record bound),
  :mod:`.modular` (solving and rational reconstruction mod n), :mod:`.protocol` (the parties'
  computations: ``Provider``, ``Aggregator``, ``TradingPlatform``, ``Csp``), :mod:`.session`
  (``RidgeSession``: one session's parameters and keys, the parties wired from them once, for
  the study, the servers and ``run_in_process``, which runs them all in one process), :mod:`.proofs` (the CSP's answers with their proofs of correct
  decryption, and the platform's and the buyer's checks), :mod:`.powm` (batched modular
  exponentiation), :mod:`.accuracy` (the expected fixed-point error), :mod:`.phases` (the
  optional timer the steps report to).
* At scale on Dask: :mod:`.bulk` (per-record and per-provider uploads of generated records,
  chunk by chunk over the workers), :mod:`.chunks` (each chunk folded exactly once).
* The parties as processes over HTTP: :mod:`.messages` (the wire format), :mod:`.server`
  (what the two servers share: replay guard, parsing, serving), :mod:`.peer` (a party as a
  client of another), :mod:`.tokens` (bearer tokens), :mod:`.db` (SQLite files, the processed
  message ids), :mod:`.store` / :mod:`.csp_store` (the platform's and the CSP's durable
  state), :mod:`.csp`, :mod:`.platform`, :mod:`.provider`, :mod:`.buyer`, and :mod:`.demo`
  (all of them started as processes on this machine).

Where to start reading: :func:`.session.run_in_process` (the whole protocol in one call),
then :mod:`.platform` for how a party keeps state across crashes.
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
from cryptoffload.apps.ridge.proofs import CspProofError, Solution, Unpacked, check_exclusions, verify_solution
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
)
from cryptoffload.apps.ridge.session import RidgeKeys, RidgeSession, run_in_process

__all__ = [
    "UPLOAD_MODES", "Aggregate", "Aggregator", "Csp", "CspProofError", "EncryptedSystem", "Solution", "Unpacked",
    "check_exclusions", "verify_solution", "TradingPlatform", "MaskSecret", "MaskedSystem",
    "Provider", "ReconstructionError", "RidgeKeys", "RidgeModel", "RidgeParams", "RidgeResult", "RidgeSession",
    "SingularMatrixError", "Upload",
    "aggregate", "check_solve_key", "check_upload_key", "error_bound", "rational_reconstruct", "recover_model",
    "required_solve_key_bits", "run_in_process", "solve_bounds", "solve_mod", "upload_layout",
]
