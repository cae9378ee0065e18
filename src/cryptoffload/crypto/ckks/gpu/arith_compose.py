"""The batched ops of :class:`~.arith.Arith` composed from its primitive ops (ntt, base_convert,
ks_inner, mul, ...): how the kernel sets without fused kernels (``ref``, ``numba``) run them, and
the reference the fused CUDA kernels (:mod:`.arith_cuda`) are checked against bit for bit.

Each function takes the :class:`~.arith.Arith` ``ar`` and works through its primitive methods,
so it runs on any kernel set and array module. Clarity over speed: these loop over items.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from cryptoffload.crypto.ckks.gpu.kernelset import Array, Index, KeyWords

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.gpu.arith import Arith
    from cryptoffload.crypto.ckks.gpu.convplan import ConvPlan


def transform(ar: Arith, buf: Array, offsets: np.ndarray, primes: np.ndarray, inverse: bool,
              src: Array | None = None) -> Array:
    flat = buf.reshape(-1, buf.shape[-1])
    rows = (src if src is not None else buf).reshape(-1, buf.shape[-1])[offsets].copy()
    done = ar.intt(rows, primes) if inverse else ar.ntt(rows, primes)   # rows: a contiguous copy
    flat[offsets] = done
    return buf


def convert(ar: Arith, x: Array, plan: ConvPlan, out: Array) -> Array:
    xf = x.reshape(-1, x.shape[-1])
    of = out.reshape(-1, out.shape[-1])
    for job in plan.jobs_list:
        conv = ar.base_convert(xf[job.x_row: job.x_row + len(job.src)], job.src, job.dst, exact=job.exact)
        for d, r in enumerate(job.drow):
            of[job.out_row + r] = conv[d]
    return out


def ks_items(ar: Arith, digits: Array, keys: KeyWords, perms: Index, items: np.ndarray, qp_rows: np.ndarray,
             key_rows: np.ndarray) -> Array:
    out = ar.xp.empty((len(items), 2) + digits.shape[2:], dtype=ar.xp.uint64)
    for k, (b, key, perm) in enumerate(items.tolist()):
        d = digits[b]
        if perm >= 0:
            d = ar.impl.permute(ar.t, ar.xp.ascontiguousarray(d), perms[perm])
        out[k] = ar.ks_inner(d, keys[key], key_rows, qp_rows)
    return out


def combine(ar: Arith, a: Array, conv: Array, base: Array | None, perms: Index, items: np.ndarray, rows: np.ndarray,
            c: Array, c_sh: Array) -> Array:
    n = conv.shape[-1]
    r_count = conv.shape[1]
    af = a.reshape(-1, n)
    out = ar.xp.empty_like(conv)
    for i, (a_off, base_off, perm) in enumerate(items.tolist()):
        x = af[a_off // n: a_off // n + r_count]
        v = ar.mul_const(ar.sub(x, conv[i], rows), c, c_sh, rows)
        if base_off >= 0:
            if base is None:   # the caller's items and base disagree: a bug in the scheme
                raise AssertionError("combine: an item adds a base, but no base was given")
            b = base.reshape(-1, n)[base_off // n: base_off // n + r_count]
            if perm >= 0:
                b = ar.impl.permute(ar.t, ar.xp.ascontiguousarray(b), perms[perm])
            v = ar.add(v, b, rows)
        out[i] = v
    return out


def dot(ar: Arith, cts: Sequence[Array], pts: Sequence[KeyWords], rows: np.ndarray, acc: Array | None = None) -> Array:
    for ct, pt in zip(cts, pts):
        pt = ar.xp.asarray(pt[: ct.shape[-2]], dtype=ar.xp.uint64)   # a plaintext may hold more rows (P's)
        term = ar.mul(ct, ar.xp.ascontiguousarray(ar.xp.broadcast_to(pt, ct.shape)), rows)
        acc = term if acc is None else ar.add(acc, term, rows)
    if acc is None:
        raise ValueError("dot: no terms and no accumulator to sum")
    return acc


def total(ar: Arith, arrays: Sequence[Array], rows: np.ndarray) -> Array:
    acc = arrays[0]
    for a in arrays[1:]:
        acc = ar.add(acc, a, rows)
    return acc


def lincomb(ar: Arith, x: Array, c: Array, c_sh: Array, rows: np.ndarray) -> Array:
    out = ar.xp.empty((c.shape[0],) + x.shape[1:], dtype=ar.xp.uint64)
    for r in range(c.shape[0]):
        for s in range(x.shape[1]):          # one polynomial at a time: one constant per row
            acc = None
            for p in range(x.shape[0]):
                term = ar.mul_const(x[p, s], c[r, p], c_sh[r, p], rows)
                acc = term if acc is None else ar.add(acc, term, rows)
            out[r, s] = acc
    return out


def tensor(ar: Arith, a: Array, b: Array, rows: np.ndarray) -> Array:
    xp = ar.xp
    p = ar.mul(xp.stack([a[0], a[0], a[1], a[1]]), xp.stack([b[0], b[1], b[0], b[1]]), rows)
    return xp.stack([p[0], ar.add(p[1], p[2], rows), p[3]])


def gather(ar: Arith, arrays: Sequence[Array]) -> Array:
    return ar.xp.stack(list(arrays))
