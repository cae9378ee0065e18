"""Many modular exponentiations in as few native calls as possible: the platform's masking of
the normal equations (d^3 + d^2 of them) and the buyer's check of the CSP's solve (d^2).

Why one place: both exponentiate ciphertexts modulo n^2 by secret or private exponents (R, r;
the masked solution), so both want the same choice of kernel -- crypto_mb's 8-lane IFMA
modexp where it computes correctly for the modulus, else GMP's constant-time batch -- and
the same split over threads (the native calls release the GIL).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import gmpy2

from cryptoffload.crypto._native import core as native


def powm_batch(bases: list[int], exps: list[int], modulus: int, exp_bits: int, workers: int) -> tuple[list[int], str]:
    """``b_i^e_i mod modulus`` in as few native calls as possible (one per worker thread; the
    calls release the GIL). crypto_mb where it computes correctly for this modulus, else GMP.

    The exponents are secrets (R and r, the only thing hiding A from the CSP; the masked
    solution w', from which R and r give the model), so both paths are constant time in the
    exponent (crypto_mb is; GMP runs ``mpz_powm_sec``, about 20 % slower than ``mpz_powm`` at
    4096 bits here). Returns the powers and the kernel's name."""
    use_mbx = native.ifma_available() and native.mbx_kernel_bits(modulus) is not None
    if use_mbx:
        def run(b: list[int], e: list[int]) -> list[int]:
            return native.mbx_powm_batch(b, e, exp_bits, modulus)
        name = f"crypto_mb ({native.mbx_kernel_bits(modulus)}-bit kernel)"
        lane = 8
    elif native.native_available():
        def run(b: list[int], e: list[int]) -> list[int]:
            return native.powm_batch(b, e, modulus, secret=True)
        name = "GMP powm_batch"
        lane = 1
    else:  # pragma: no cover - only on a broken install
        def run(b: list[int], e: list[int]) -> list[int]:
            return [int(gmpy2.powmod(x, k, modulus)) for x, k in zip(b, e)]
        name = "gmpy2 powmod"
        lane = 1
    count = len(bases)
    workers = max(1, min(workers, -(-count // lane))) if count else 1
    if workers == 1:
        return run(bases, exps), name
    per = -(-count // workers)
    per = -(-per // lane) * lane
    parts = [(bases[i:i + per], exps[i:i + per]) for i in range(0, count, per)]
    with ThreadPoolExecutor(max_workers=len(parts)) as pool:
        results = list(pool.map(lambda be: run(*be), parts))
    return [v for part in results for v in part], name
