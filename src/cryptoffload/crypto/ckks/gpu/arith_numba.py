"""The CPU twin's fast kernels: the reference kernels' loops compiled with numba, one thread.

Same inputs, same outputs (canonical residues) as :mod:`.arith_ref`, bit for bit (tested):
only the reduction differs. Constants use Shoup's precomputed quotient (``w' = floor(w 2^32 /
q)``: ``q_hat = (x w') >> 32`` is the quotient of ``x w`` by ``q`` or one less, so
``x w - q_hat q`` lies in ``[0, 2q)`` and one conditional subtraction makes it canonical).
Products of two variables estimate their quotient in float64 (``< 2**62`` in, relative error
a few ``2**-53``: off by at most one) and correct once in each direction in int64. The CUDA
kernels (``kernels.cu``) use the same two reductions, so the three agree by construction as
well as by test.

All integers are ``uint64`` (typed explicitly: numba would turn a mix of signed and unsigned
64-bit integers into float64). One thread, like SEAL, so twin and SEAL timings compare.
"""

from __future__ import annotations

import numba
import numpy as np

from cryptoffload.crypto.ckks.gpu.kernelset import Array, DeviceTables, Floats, Index, KeyWords

_S = np.uint64(32)
_Z = np.uint64(0)


@numba.njit(inline="always")
def _shoup(x: np.uint64, w: np.uint64, ws: np.uint64, q: np.uint64) -> np.uint64:
    r = x * w - ((x * ws) >> _S) * q
    return r - q if r >= q else r


@numba.njit(inline="always")
def _reduce(x: np.uint64, q: np.uint64, qinv: float) -> np.uint64:
    """``x mod q`` for ``x < 2**62`` without a hardware division: the float64 quotient is off by
    at most one either way, corrected in int64."""
    est = np.uint64(np.float64(x) * qinv)
    r = np.int64(x - est * q)
    qi = np.int64(q)
    if r < 0:
        r += qi
    elif r >= qi:
        r -= qi
    return np.uint64(r)


@numba.njit(inline="always")
def _mulmod(a: np.uint64, b: np.uint64, q: np.uint64, qinv: float) -> np.uint64:
    return _reduce(a * b, q, qinv)


@numba.njit(cache=True)
def _ntt(a: Array, rows: Index, q_all: Array, psi: Array, psi_sh: Array) -> None:
    r_count, n = a.shape
    for r in range(r_count):
        k = rows[r]
        q = q_all[k]
        x = a[r]
        m = 1
        h = n
        while m < n:
            h >>= 1
            for i in range(m):
                w = psi[k, m + i]
                ws = psi_sh[k, m + i]
                base = 2 * i * h
                for j in range(base, base + h):
                    u = x[j]
                    v = _shoup(x[j + h], w, ws, q)
                    s = u + v
                    x[j] = s - q if s >= q else s
                    d = u + q - v
                    x[j + h] = d - q if d >= q else d
            m <<= 1


@numba.njit(cache=True)
def _intt(a: Array, rows: Index, q_all: Array, ipsi: Array, ipsi_sh: Array, ninv: Array, ninv_sh: Array) -> None:
    r_count, n = a.shape
    for r in range(r_count):
        k = rows[r]
        q = q_all[k]
        x = a[r]
        m = n
        h = 1
        while m > 1:
            half = m >> 1
            for i in range(half):
                w = ipsi[k, half + i]
                ws = ipsi_sh[k, half + i]
                base = 2 * i * h
                for j in range(base, base + h):
                    u = x[j]
                    v = x[j + h]
                    s = u + v
                    x[j] = s - q if s >= q else s
                    x[j + h] = _shoup(u + q - v, w, ws, q)
            h <<= 1
            m = half
        c = ninv[k]
        cs = ninv_sh[k]
        for j in range(n):
            x[j] = _shoup(x[j], c, cs, q)


@numba.njit(cache=True)
def _add(a: Array, b: Array, rows: Index, q_all: Array, out: Array) -> None:
    for r in range(a.shape[0]):
        q = q_all[rows[r]]
        for j in range(a.shape[1]):
            s = a[r, j] + b[r, j]
            out[r, j] = s - q if s >= q else s


@numba.njit(cache=True)
def _sub(a: Array, b: Array, rows: Index, q_all: Array, out: Array) -> None:
    for r in range(a.shape[0]):
        q = q_all[rows[r]]
        for j in range(a.shape[1]):
            d = a[r, j] + q - b[r, j]
            out[r, j] = d - q if d >= q else d


@numba.njit(cache=True)
def _neg(a: Array, rows: Index, q_all: Array, out: Array) -> None:
    for r in range(a.shape[0]):
        q = q_all[rows[r]]
        for j in range(a.shape[1]):
            x = a[r, j]
            out[r, j] = q - x if x != _Z else _Z


@numba.njit(cache=True)
def _mul(a: Array, b: Array, rows: Index, q_all: Array, qinv_all: Floats, out: Array) -> None:
    for r in range(a.shape[0]):
        k = rows[r]
        q = q_all[k]
        qinv = qinv_all[k]
        for j in range(a.shape[1]):
            out[r, j] = _mulmod(a[r, j], b[r, j], q, qinv)


@numba.njit(cache=True)
def _mul_const(a: Array, c: Array, c_sh: Array, rows: Index, q_all: Array, out: Array) -> None:
    for r in range(a.shape[0]):
        q = q_all[rows[r]]
        w = c[r]
        ws = c_sh[r]
        for j in range(a.shape[1]):
            out[r, j] = _shoup(a[r, j], w, ws, q)


@numba.njit(cache=True)
def _base_convert(x: Array, src: Index, dst: Index, yinv: Array, yinv_sh: Array, mat: Array, mat_sh: Array,
                  q_all: Array, qinv_all: Floats, exact: Array, use_exact: bool, out: Array) -> None:
    s_count, n = x.shape
    y = np.empty((s_count, n), dtype=np.uint64)
    for s in range(s_count):
        q = q_all[src[s]]
        w = yinv[s]
        ws = yinv_sh[s]
        for j in range(n):
            y[s, j] = _shoup(x[s, j], w, ws, q)
    v = np.zeros(n, dtype=np.uint64)
    if use_exact:
        for j in range(n):
            frac = 0.0   # sum of y_s / q_s: how many times the sum overflows the product
            for s in range(s_count):
                frac = frac + np.float64(y[s, j]) * qinv_all[src[s]]
            v[j] = np.uint64(np.floor(frac + 0.5))
    for d in range(dst.shape[0]):
        k = dst[d]
        q = q_all[k]
        qinv = qinv_all[k]
        for j in range(n):
            acc = _Z
            for s in range(s_count):
                acc += _shoup(y[s, j], mat[s, d], mat_sh[s, d], q)
            r = _reduce(acc, q, qinv)
            if use_exact:
                c = (v[j] * exact[d]) % q
                r = r + q - c
                r = r - q if r >= q else r
            out[d, j] = r


@numba.njit(cache=True)
def _ks_inner(digits: Array, key: KeyWords, key_rows: Index, rows: Index, q_all: Array, qinv_all: Floats,
              out: Array) -> None:
    g_count, r_count, n = digits.shape
    for r in range(r_count):
        k = rows[r]
        q = q_all[k]
        qinv = qinv_all[k]
        kr = key_rows[r]
        for j in range(n):
            acc0 = _Z
            acc1 = _Z
            for g in range(g_count):
                d = digits[g, r, j]
                acc0 += _mulmod(d, key[g, 0, kr, j], q, qinv)
                acc1 += _mulmod(d, key[g, 1, kr, j], q, qinv)
            out[0, r, j] = _reduce(acc0, q, qinv)
            out[1, r, j] = _reduce(acc1, q, qinv)


@numba.njit(cache=True)
def _permute(a: Array, perm: Index, out: Array) -> None:
    for r in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[r, j] = a[r, perm[j]]


# -- the kernel set (kernelset.LoopKernels, as arith_ref) -----------------------------------------


def add(t: DeviceTables, a: Array, b: Array, rows: Index) -> Array:
    out = np.empty_like(a)
    _add(a, b, rows, t.q, out)
    return out


def sub(t: DeviceTables, a: Array, b: Array, rows: Index) -> Array:
    out = np.empty_like(a)
    _sub(a, b, rows, t.q, out)
    return out


def neg(t: DeviceTables, a: Array, rows: Index) -> Array:
    out = np.empty_like(a)
    _neg(a, rows, t.q, out)
    return out


def mul(t: DeviceTables, a: Array, b: Array, rows: Index) -> Array:
    out = np.empty_like(a)
    _mul(a, b, rows, t.q, t.qinv, out)
    return out


def mul_const(t: DeviceTables, a: Array, c: Array, c_sh: Array, rows: Index) -> Array:
    out = np.empty_like(a)
    _mul_const(a, c, c_sh, rows, t.q, out)
    return out


def ntt(t: DeviceTables, a: Array, rows: Index) -> Array:
    _ntt(a, rows, t.q, t.psi, t.psi_sh)
    return a


def intt(t: DeviceTables, a: Array, rows: Index) -> Array:
    _intt(a, rows, t.q, t.ipsi, t.ipsi_sh, t.ninv, t.ninv_sh)
    return a


def base_convert(t: DeviceTables, x: Array, src: Index, dst: Index, yinv: Array, yinv_sh: Array, mat: Array,
                 exact: Array | None = None) -> Array:
    out = np.empty((len(dst), x.shape[1]), dtype=np.uint64)
    mat_sh = (mat << _S) // t.q[dst][None, :]     # Shoup quotients of the conversion matrix
    _base_convert(x, src, dst, yinv, yinv_sh, mat, mat_sh, t.q, t.qinv, yinv if exact is None else exact,
                  exact is not None, out)
    return out


def ks_inner(t: DeviceTables, digits: Array, key: KeyWords, key_rows: Index, rows: Index) -> Array:
    out = np.empty((2,) + digits.shape[1:], dtype=np.uint64)
    _ks_inner(digits, key, key_rows, rows, t.q, t.qinv, out)
    return out


def permute(t: DeviceTables, a: Array, perm: Index) -> Array:
    shape = a.shape
    flat = a.reshape(-1, shape[-1])
    out = np.empty_like(flat)
    _permute(flat, perm, out)
    return out.reshape(shape)
