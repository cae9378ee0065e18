"""Products of powers modulo n^2: the platform's masking of the normal equations (Enc(A R),
Enc(b + A r)) and the buyer's and CSP's checks of the solve (prod_k Enc(AR)_ik^(w'_k)).

Why one place: all of them exponentiate ciphertexts by secret exponents (R and r, the only
thing hiding A from the CSP; the masked solution w', from which R and r give the model), so
all want the same constant-time kernel, the same route and the same split over threads (the
native calls release the GIL).

Each output is a product of k powers whose bases are shared along a row of bases (a row of
A) and whose exponent rows are shared by every row of bases (the columns of R, then r). Two
routes compute it:

* ``multiexp``: one constant-time multi-exponentiation per row of bases
  (:func:`~cryptoffload.crypto._native.core.multi_powm`, Straus: a table per base built once
  for all exponent rows, the squarings shared by the k powers of an output) -- about 5x fewer
  Montgomery products than k separate exponentiations; on the MULX/ADX kernel where it runs,
  else on GMP's products.
* ``batch``: the k powers of every output exponentiated separately in one batch (crypto_mb's
  8-lane IFMA modexp where it computes correctly for the modulus, else GMP's
  ``mpz_powm_sec``), then multiplied together.

Which route runs on which arithmetic path is :data:`ROUTES`, chosen by measurement
(``benchmarks/ridge.py``, results in ``benchmarks/results/ridge.json``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence, TypeVar

import gmpy2

from cryptoffload.crypto import native
from cryptoffload.errors import ConfigError

#: The route per arithmetic path (:func:`cryptoffload.crypto._native.core.cpu_path`), chosen by
#: measurement: the masked solve at d = 20 with a 2048-bit solve key (8,400 powers modulo a
#: 4096-bit n^2), ``benchmarks/ridge.py --solve``, AMD EPYC Zen 4, CPU seconds, medians of
#: interleaved rounds (docs/apps/ridge.md). ``multiexp`` won on every path measured: 1.4-1.6x
#: crypto_mb's 8-lane IFMA batch on the IFMA path (that batch computes 5x the Montgomery
#: products), 5.8-6.1x GMP's ``mpz_powm_sec`` with IFMA hidden. Not measured on a Xeon, whose
#: IFMA is faster: re-measure ``ifma`` there. ``batch`` stays for a path where a measurement
#: shows it faster, and as the benchmark's baseline; without the native core only it runs.
ROUTES: dict[str, str] = {"ifma": "multiexp", "adx": "multiexp", "gmp": "multiexp", "none": "batch"}

_T = TypeVar("_T")
_R = TypeVar("_R")


def route_for(route: str | None = None) -> str:
    """``route`` if given (``multiexp`` or ``batch``), else the measured choice for this CPU's
    arithmetic path (:data:`ROUTES`)."""
    chosen = route or ROUTES[native.cpu_path()]
    if chosen not in ("multiexp", "batch"):
        raise ConfigError(f"unknown exponentiation route {chosen!r}; choose multiexp or batch")
    return chosen


def products_of_powers(base_rows: Sequence[Sequence[int]], exponents: Sequence[Sequence[int]], modulus: int,
                       exp_bits: int, workers: int, route: str | None = None) -> tuple[list[list[int]], str]:
    """``out[i][s] = prod_j base_rows[i][j] ** exponents[s][j] mod modulus``, constant time in
    the exponents (each in [0, 2^exp_bits)), spread over ``workers`` threads; ``route`` forces
    one (default: :func:`route_for`). Returns the products and what computed them.

    The platform's masking: base_rows = Enc(A) (d rows of d), exponents = the columns of R and
    then r (d + 1 rows of d). The check of the solve: base_rows = Enc(A R), exponents = [w']."""
    if not base_rows or not exponents:
        return [[] for _ in base_rows], "nothing to compute"
    k = len(exponents[0])
    if any(len(row) != k for row in base_rows) or any(len(e) != k for e in exponents):
        raise ConfigError("products of powers need one exponent per base in every row")
    if route_for(route) == "multiexp":
        return _multiexp(base_rows, exponents, modulus, exp_bits, workers)
    return _batch(base_rows, exponents, modulus, exp_bits, workers)


def _in_threads(fn: Callable[[_T], _R], items: list[_T], workers: int) -> list[_R]:
    """``[fn(x) for x in items]`` on up to ``workers`` threads (the native calls release the GIL)."""
    workers = max(1, min(workers, len(items)))
    if workers == 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


def _multiexp(base_rows: Sequence[Sequence[int]], exponents: Sequence[Sequence[int]], modulus: int, exp_bits: int,
              workers: int) -> tuple[list[list[int]], str]:
    """One multi-exponentiation call per row of bases (its tables built once for all exponent
    rows). With more workers than rows of bases, the exponent rows are split too (each part
    builds the row's tables again: a few per cent of its work)."""
    backend = "adx" if native.adx_fits(modulus.bit_length()) else "gmp"
    parts = max(1, -(-workers // len(base_rows)))
    per = -(-len(exponents) // parts)
    slices = [(lo, min(lo + per, len(exponents))) for lo in range(0, len(exponents), per)]
    tasks = [(i, lo, hi) for i in range(len(base_rows)) for lo, hi in slices]

    def run(task: tuple[int, int, int]) -> list[int]:
        i, lo, hi = task
        return native.multi_powm(base_rows[i], exponents[lo:hi], modulus, exp_bits, backend)

    results = iter(_in_threads(run, tasks, workers))
    out = [[v for _ in slices for v in next(results)] for _ in base_rows]
    kernel = "MULX/ADX" if backend == "adx" else "GMP"
    return out, f"multi-exponentiation, {kernel} kernel"


def _batch(base_rows: Sequence[Sequence[int]], exponents: Sequence[Sequence[int]], modulus: int, exp_bits: int,
           workers: int) -> tuple[list[list[int]], str]:
    """Every power exponentiated alone in one batch (:func:`powm_batch`), then each output's
    k powers multiplied."""
    k, count = len(exponents[0]), len(exponents)
    bases = [b for row in base_rows for b in row for _ in range(count)]
    exps = [e[j] for _ in base_rows for j in range(k) for e in exponents]
    powers, name = powm_batch(bases, exps, modulus, exp_bits, workers)
    out = []
    for i in range(len(base_rows)):
        acc = [gmpy2.mpz(1)] * count
        for j in range(k):
            at = (i * k + j) * count
            acc = [a * p % modulus for a, p in zip(acc, powers[at:at + count])]
        out.append([int(a) for a in acc])
    return out, f"separate exponentiations, {name}"


def powm_batch(bases: list[int], exps: list[int], modulus: int, exp_bits: int, workers: int) -> tuple[list[int], str]:
    """``b_i^e_i mod modulus`` in as few native calls as possible (one per worker thread; the
    calls release the GIL). crypto_mb where it computes correctly for this modulus, else GMP.

    Constant time in the exponent (crypto_mb is; GMP runs ``mpz_powm_sec``, about 20 % slower
    than ``mpz_powm`` at 4096 bits here). Returns the powers and the kernel's name."""
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
    per = -(-count // workers)
    per = -(-per // lane) * lane
    parts = [(bases[i:i + per], exps[i:i + per]) for i in range(0, count, per)]
    results = _in_threads(lambda be: run(*be), parts, workers)
    return [v for part in results for v in part], name
