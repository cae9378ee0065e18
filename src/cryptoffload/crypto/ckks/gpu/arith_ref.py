"""Reference kernels written with array operations only: they run unchanged on NumPy and CuPy.

Why a reference: the fast kernels (numba on the CPU, CUDA on the GPU) are checked bit for bit
against these, on the array module each runs on. Clarity over speed: products of two residues
(< 2**62) are reduced with the ``%`` operator, which is exact on ``uint64``.

Every function takes ``t`` (the :class:`~.kernelset.DeviceTables` of :class:`~.arith.Arith`:
``t.xp``, ``t.q``, NTT tables indexed ``[prime row, i]``) and ``rows``: for each row of the operand, the index of
its prime in the ring's row order. Operands are ``uint64`` arrays of shape ``(R, N)`` holding
canonical residues (``0 <= x < q``); results are canonical too. The module implements
:class:`~.kernelset.LoopKernels` (checked where :mod:`.arith` registers it).
"""

from __future__ import annotations

from cryptoffload.crypto.ckks.gpu.kernelset import Array, DeviceTables, Index, KeyWords


def _q(t: DeviceTables, rows: Index) -> Array:
    return t.q[rows][:, None]


def add(t: DeviceTables, a: Array, b: Array, rows: Index) -> Array:
    q = _q(t, rows)
    s = a + b
    return t.xp.where(s >= q, s - q, s)


def sub(t: DeviceTables, a: Array, b: Array, rows: Index) -> Array:
    q = _q(t, rows)
    return t.xp.where(a >= b, a - b, a + q - b)


def neg(t: DeviceTables, a: Array, rows: Index) -> Array:
    q = _q(t, rows)
    return t.xp.where(a == 0, a, q - a)


def mul(t: DeviceTables, a: Array, b: Array, rows: Index) -> Array:
    return (a * b) % _q(t, rows)


def mul_const(t: DeviceTables, a: Array, c: Array, c_sh: Array, rows: Index) -> Array:
    """``a * c[r] mod q`` with one constant per row (``c_sh``, Shoup's quotients, unused here)."""
    return (a * c[:, None]) % _q(t, rows)


def ntt(t: DeviceTables, a: Array, rows: Index) -> Array:
    """Forward negacyclic NTT of each row, in place (returns ``a``)."""
    xp = t.xp
    r, n = a.shape
    q = t.q[rows][:, None, None]
    m, h = 1, n
    while m < n:
        h //= 2
        blk = a.reshape(r, m, 2 * h)
        w = t.psi[rows][:, m: 2 * m][:, :, None]
        u = blk[:, :, :h].copy()
        v = (blk[:, :, h:] * w) % q
        s = u + v
        blk[:, :, :h] = xp.where(s >= q, s - q, s)
        blk[:, :, h:] = xp.where(u >= v, u - v, u + q - v)
        m *= 2
    return a


def intt(t: DeviceTables, a: Array, rows: Index) -> Array:
    """Inverse negacyclic NTT of each row, in place (returns ``a``)."""
    xp = t.xp
    r, n = a.shape
    q = t.q[rows][:, None, None]
    h, m = 1, n
    while m > 1:
        half = m // 2
        blk = a.reshape(r, half, 2 * h)
        w = t.ipsi[rows][:, half: m][:, :, None]
        u = blk[:, :, :h].copy()
        v = blk[:, :, h:].copy()
        s = u + v
        blk[:, :, :h] = xp.where(s >= q, s - q, s)
        d = xp.where(u >= v, u - v, u + q - v)
        blk[:, :, h:] = (d * w) % q
        h *= 2
        m = half
    a[...] = (a * t.ninv[rows][:, None]) % t.q[rows][:, None]
    return a


def base_convert(t: DeviceTables, x: Array, src: Index, dst: Index, yinv: Array, yinv_sh: Array, mat: Array,
                 exact: Array | None = None) -> Array:
    """Fast base conversion of coefficient-form residues ``x`` (rows ``src``) to rows ``dst``:
    ``out_t = sum_s (x_s * yinv_s mod q_s) * mat[s, t] mod t`` -- ``x + u Qs`` for some
    ``0 <= u < S``. With ``exact`` (``Qs mod t`` per destination row) the overflow ``u`` is
    removed and the result centred (Halevi, Polyakov and Shoup, CT-RSA 2019):
    ``v = floor(sum_s y_s * (1/q_s) + 1/2)`` in float64, summed in row order without fused
    multiply-adds (the CUDA and numba kernels do the same operations in the same order), and
    ``out_t -= v * (Qs mod t)``: the representative of ``x`` in ``[-Qs/2, Qs/2)``."""
    xp = t.xp
    y = (x * yinv[:, None]) % _q(t, src)
    qd = t.q[dst]
    out = xp.zeros((len(dst), x.shape[1]), dtype=xp.uint64)
    for s in range(x.shape[0]):
        out = (out + (y[s][None, :] * mat[s][:, None]) % qd[:, None]) % qd[:, None]
    if exact is not None:
        acc = xp.zeros(x.shape[1], dtype=xp.float64)
        for s in range(x.shape[0]):
            acc = acc + y[s].astype(xp.float64) * t.qinv[src[s]]
        v = xp.floor(acc + 0.5).astype(xp.uint64)
        corr = (v[None, :] * exact[:, None]) % qd[:, None]
        out = xp.where(out >= corr, out - corr, out + qd[:, None] - corr)
    return out


def ks_inner(t: DeviceTables, digits: Array, key: KeyWords, key_rows: Index, rows: Index) -> Array:
    """Key switching's inner product: ``out[c] = sum_g digits[g] * key[g, c, key_rows]`` mod q
    (``digits``: ``(G, R, N)``; ``key``: ``(G', 2, K, N)`` with ``G' >= G``); ``(2, R, N)``."""
    xp = t.xp
    q = _q(t, rows)
    out = xp.zeros((2,) + digits.shape[1:], dtype=xp.uint64)
    for g in range(digits.shape[0]):
        for c in range(2):
            out[c] = (out[c] + (digits[g] * key[g, c][key_rows]) % q) % q
    return out


def permute(t: DeviceTables, a: Array, perm: Index) -> Array:
    """``out[..., i] = a[..., perm[i]]``: a Galois automorphism on NTT-domain rows."""
    return a[..., perm]
