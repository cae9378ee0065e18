"""The GPU's kernel set: the kernels of ``kernels.cu`` launched through CuPy (same signatures
and the same results, bit for bit, as :mod:`.arith_ref` and :mod:`.arith_numba`).

``kernels.cu`` is read with :mod:`importlib.resources` and compiled once per process by NVRTC
(:func:`cryptoffload.cuda.kernel`: one compilation even when threads ask at once; CuPy caches
the binary on disk). CuPy itself is reached through :mod:`cryptoffload.cuda` only.

Launch shapes: elementwise kernels and NTT stages one thread per output (per butterfly),
256 threads a block. The NTT runs its stages with half-distance ``h > T`` (``T = min(1024,
N/2)``) one launch each over global memory, then the remaining ``log2(2T)`` stages in one
launch with a row chunk of ``2T`` words in shared memory (``ntt_tail``); the inverse mirrors
it (``intt_head`` first) and multiplies by ``N^-1`` in its last stage. The shared-memory
launches have one block per (row, chunk), all in ``grid.x`` (``grid.y`` would cap the rows of
a batch at 65,535).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from cryptoffload import cuda

BLOCK = 256
MAX_CHUNK_THREADS = 1024
MAX_SRC = 32  # kernels.cu's bound on a base conversion's source rows
PROBE_KERNEL = "add_k"  # what the availability probe builds and loads (device.gpu_reason)


@lru_cache(maxsize=1)
def source() -> str:
    """The CUDA source (also what the nvcc test compiles)."""
    return resources.files("cryptoffload.crypto.ckks.gpu").joinpath("kernels.cu").read_text(encoding="utf-8")


def nvrtc_options() -> tuple[str, ...]:
    return ("--std=c++17",)


def _kernel(name: str) -> Any:
    return cuda.kernel(source(), nvrtc_options(), name)


def prepare(t: Any) -> None:
    """Compile the module now (the first backend call would otherwise pay for it)."""
    _kernel(PROBE_KERNEL)


def _i32(x: int) -> np.int32:
    return np.int32(x)


def _grid(total: int) -> tuple[int]:
    return ((total + BLOCK - 1) // BLOCK,)


def _elementwise(name: str, t: Any, arrays: tuple[Any, ...], rows: Any, extra: tuple[Any, ...] = ()) -> Any:
    a = arrays[0]
    out = t.xp.empty_like(a)
    total = a.size
    _kernel(name)(_grid(total), (BLOCK,), arrays + (rows, t.q) + extra + (_i32(a.shape[-1]), np.int64(total), out))
    return out


def add(t: Any, a: Any, b: Any, rows: Any) -> Any:
    return _elementwise("add_k", t, (a, b), rows)


def sub(t: Any, a: Any, b: Any, rows: Any) -> Any:
    return _elementwise("sub_k", t, (a, b), rows)


def neg(t: Any, a: Any, rows: Any) -> Any:
    return _elementwise("neg_k", t, (a,), rows)


def mul(t: Any, a: Any, b: Any, rows: Any) -> Any:
    return _elementwise("mul_k", t, (a, b), rows, (t.qinv,))


def mul_const(t: Any, a: Any, c: Any, c_sh: Any, rows: Any) -> Any:
    return _elementwise("mul_const_k", t, (a, c, c_sh), rows)


def _chunk(n: int) -> int:
    return min(MAX_CHUNK_THREADS, n // 2)


def ntt(t: Any, a: Any, rows: Any) -> Any:
    r_count, n = a.shape
    threads = _chunk(n)
    total = r_count * n // 2
    m, h = 1, n // 2
    while h > threads:
        _kernel("ntt_stage")(_grid(total), (BLOCK,), (a, rows, t.q, t.psi, t.psi_sh, _i32(n), _i32(m), _i32(h),
                                                     np.int64(total)))
        m, h = 2 * m, h // 2
    _kernel("ntt_tail")((r_count * (n // (2 * threads)),), (threads,), (a, rows, t.q, t.psi, t.psi_sh, _i32(n), _i32(m)),
                        shared_mem=2 * threads * 8)
    return a


def intt(t: Any, a: Any, rows: Any) -> Any:
    r_count, n = a.shape
    threads = _chunk(n)
    total = r_count * n // 2
    _kernel("intt_head")((r_count * (n // (2 * threads)),), (threads,),
                         (a, rows, t.q, t.ipsi, t.ipsi_sh, t.ninv, t.ninv_sh, _i32(n), _i32(int(2 * threads == n))),
                         shared_mem=2 * threads * 8)
    h, half = 2 * threads, n // (4 * threads)
    while h <= n // 2:
        _kernel("intt_stage")(_grid(total), (BLOCK,), (a, rows, t.q, t.ipsi, t.ipsi_sh, t.ninv, t.ninv_sh, _i32(n),
                                                      _i32(half), _i32(h), _i32(int(h == n // 2)), np.int64(total)))
        h, half = 2 * h, half // 2
    return a


def base_convert(t: Any, x: Any, src: Any, dst: Any, yinv: Any, yinv_sh: Any, mat: Any, exact: Any = None) -> Any:
    s_count, n = x.shape
    if s_count > MAX_SRC:  # pragma: no cover - digits and P have a few primes each
        raise ValueError(f"base conversion from {s_count} rows: kernels.cu takes at most {MAX_SRC}")
    d_count = len(dst)
    out = t.xp.empty((d_count, n), dtype=t.xp.uint64)
    use = exact is not None
    _kernel("base_convert_k")(_grid(n), (BLOCK,), (x, src, dst, yinv, yinv_sh, mat, exact if use else yinv,
                                                   _i32(int(use)), t.q, t.qinv, _i32(s_count), _i32(d_count), _i32(n),
                                                   out))
    return out


def ks_inner(t: Any, digits: Any, key: Any, key_rows: Any, rows: Any) -> Any:
    g_count, r_count, n = digits.shape
    out = t.xp.empty((2, r_count, n), dtype=t.xp.uint64)
    _kernel("ks_inner_k")(_grid(r_count * n), (BLOCK,), (digits, key, key_rows, rows, t.q, t.qinv, _i32(g_count),
                                                         _i32(r_count), _i32(key.shape[2]), _i32(n), out))
    return out


def permute(t: Any, a: Any, perm: Any) -> Any:
    out = t.xp.empty_like(a)
    _kernel("permute_k")(_grid(a.size), (BLOCK,), (a, perm, _i32(a.shape[-1]), np.int64(a.size), out))
    return out
