"""The launch code of the CUDA kernel set: which kernel of ``kernels.cu``, on which grid, with
which arguments -- for the GPU (``cuda``) and for its twin on the CPU (``cuda-host``) alike.

Every launch goes through ``t.launcher()`` (the tables' :class:`~.launch.Launcher`: it counts launches
and can record them for a replay); its ``pointer`` gives a device pointer passed by value. Same
signatures (:class:`~.kernelset.FusedKernels`) and the same results, bit for bit, as :mod:`.arith_ref`
and :mod:`.arith_numba` for the primitive ops; the batched ops (``transform``, ``convert``, ``ks_items``, ``combine``, ``dot``,
``tensor``, ``gather``) are what make one HE-CNN image a few hundred launches instead of
thousands -- :mod:`.arith_compose` builds the same results from the primitive ops, for the
other kernel sets and as their reference.

Launch shapes: elementwise kernels one thread per output, 256 threads a block. An NTT is at most
two launches, both in shared memory with blocks of ``T = min(1024, N/2)`` threads holding ``2T``
words: the stages with half-distance ``h >= 2T`` column by column (``ntt_upper``: the
coefficients ``j`` with one ``j mod 2T`` pair only among themselves), then the remaining
``log2(2T)`` stages on contiguous chunks (``ntt_tail``); the inverse mirrors it (``intt_head``,
then ``intt_upper``, which multiplies by ``N^-1``). The launches have one block per (row, chunk),
all in ``grid.x`` (``grid.y`` would cap the rows of a batch at 65,535). A transform addresses its
rows through a row table ((offset, prime) pairs), so it can work on any rows of a buffer, and its
first launch may read from another buffer (out of place at no cost).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import numpy.typing as npt

from cryptoffload.crypto.ckks.gpu.kernelset import Array, DeviceTables, Floats, Index, KeyWords

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.gpu.convplan import ConvPlan
    from cryptoffload.crypto.ckks.gpu.launch import KernelArg

BLOCK = 256
MAX_CHUNK_THREADS = 1024
MAX_SRC = 32      # kernels.cu's bound on a base conversion's source rows
MAX_TERMS = 16    # kernels.cu's pointers per dot / gather launch
MAX_JOBS = 65535  # grid.y of conv_jobs_k
PROBE_KERNEL = "add_k"  # what the availability probe builds and loads (device.gpu_reason)


def _i32(x: int) -> np.int32:
    return np.int32(x)


def _grid(total: int) -> tuple[int]:
    return ((total + BLOCK - 1) // BLOCK,)


def _elementwise(name: str, t: DeviceTables, arrays: tuple[Array, ...], rows: Index,
                 extra: tuple[Floats, ...] = ()) -> Array:
    a = arrays[0]
    out = t.xp.empty_like(a)
    total = a.size
    t.launcher()(name, _grid(total), (BLOCK,), arrays + (rows, t.q) + extra + (_i32(a.shape[-1]), np.int64(total), out))
    return out


def add(t: DeviceTables, a: Array, b: Array, rows: Index) -> Array:
    return _elementwise("add_k", t, (a, b), rows)


def sub(t: DeviceTables, a: Array, b: Array, rows: Index) -> Array:
    return _elementwise("sub_k", t, (a, b), rows)


def neg(t: DeviceTables, a: Array, rows: Index) -> Array:
    return _elementwise("neg_k", t, (a,), rows)


def mul(t: DeviceTables, a: Array, b: Array, rows: Index) -> Array:
    return _elementwise("mul_k", t, (a, b), rows, (t.qinv,))


def mul_const(t: DeviceTables, a: Array, c: Array, c_sh: Array, rows: Index) -> Array:
    return _elementwise("mul_const_k", t, (a, c, c_sh), rows)


def _chunk(n: int) -> int:
    return min(MAX_CHUNK_THREADS, n // 2)


def _shared(t: DeviceTables, name: str, count: int, args: tuple[KernelArg, ...]) -> None:
    threads = _chunk(t.n)
    t.launcher()(name, (count * (t.n // (2 * threads)),), (threads,), args, 2 * threads * 8)


def _ntt_rows(t: DeviceTables, a: Array, src: Array, tab: Index, count: int) -> None:
    n = t.n
    m0 = 1
    if n > 2 * _chunk(n):        # the stages with h >= 2T, column by column
        _shared(t, "ntt_upper", count, (a, src, tab, t.q, t.psi, t.psi_sh, _i32(n)))
        src, m0 = a, n // (2 * _chunk(n))
    _shared(t, "ntt_tail", count, (a, src, tab, t.q, t.psi, t.psi_sh, _i32(n), _i32(m0)))


def _intt_rows(t: DeviceTables, a: Array, src: Array, tab: Index, count: int) -> None:
    n = t.n
    upper = n > 2 * _chunk(n)
    _shared(t, "intt_head", count, (a, src, tab, t.q, t.ipsi, t.ipsi_sh, t.ninv, t.ninv_sh, _i32(n),
                                    _i32(int(not upper))))
    if upper:                    # the stages with h >= 2T, and n^-1
        _shared(t, "intt_upper", count, (a, a, tab, t.q, t.ipsi, t.ipsi_sh, t.ninv, t.ninv_sh, _i32(n)))


def transform(t: DeviceTables, buf: Array, tab: Index, count: int, inverse: bool, src: Array | None = None) -> Array:
    """(Inverse) NTT of the ``count`` rows of ``buf`` that row table ``tab`` names, in place,
    reading from ``src`` (same layout) in the first launch when given."""
    (_intt_rows if inverse else _ntt_rows)(t, buf, buf if src is None else src, tab, count)
    return buf


def ntt(t: DeviceTables, a: Array, tab: Index) -> Array:
    """Forward NTT of every row of the contiguous ``(R, N)`` array ``a`` in place (``tab``: its
    row table)."""
    return transform(t, a, tab, a.shape[0], False)


def intt(t: DeviceTables, a: Array, tab: Index) -> Array:
    return transform(t, a, tab, a.shape[0], True)


def base_convert(t: DeviceTables, x: Array, src: Index, dst: Index, yinv: Array, yinv_sh: Array, mat: Array,
                 exact: Array | None = None) -> Array:
    s_count, n = x.shape
    if s_count > MAX_SRC:  # pragma: no cover - digits and P have a few primes each
        raise ValueError(f"base conversion from {s_count} rows: kernels.cu takes at most {MAX_SRC}")
    d_count = len(dst)
    out = t.xp.empty((d_count, n), dtype=t.xp.uint64)
    t.launcher()("base_convert_k", _grid(n), (BLOCK,), (x, src, dst, yinv, yinv_sh, mat,
                                                         yinv if exact is None else exact, _i32(int(exact is not None)),
                                                         t.q, t.qinv, _i32(s_count), _i32(d_count),
                                                     _i32(n), out))
    return out


def convert(t: DeviceTables, x: Array, plan: ConvPlan, dev: Sequence[npt.NDArray[np.generic]], out: Array) -> Array:
    """Every job of a :class:`~.convplan.ConvPlan` in one launch (``dev``: its device tables:
    jobs, sprime, yinv, yinv_sh, dprime, drow, mat, qmod); writes into ``out``."""
    jobs = plan.jobs.shape[0]
    if jobs > MAX_JOBS or plan.max_src > MAX_SRC:  # pragma: no cover - a batch of 8,000 ciphertexts
        raise ValueError(f"{jobs} conversion jobs of up to {plan.max_src} rows: "
                         f"kernels.cu takes {MAX_JOBS} / {MAX_SRC}")
    n = t.n
    t.launcher()("conv_jobs_k", (_grid(n)[0], jobs), (BLOCK,), (x, *dev, t.q, t.qinv, _i32(n), out))
    return out


def ks_items(t: DeviceTables, digits: Array, keys: KeyWords, perms: Index, items: Index, count: int, key_rows: Index,
             rows: Index) -> Array:
    """Key-switching inner products of ``count`` items (see ``ks_items_body``): ``(K, 2, QP, N)``."""
    _, g_count, qp, n = digits.shape
    out = t.xp.empty((count, 2, qp, n), dtype=t.xp.uint64)
    total = count * qp * n
    t.launcher()("ks_items_k", _grid(total), (BLOCK,), (digits, keys, perms, items, key_rows, rows, t.q, t.qinv,
                                                     _i32(g_count), _i32(qp), _i32(keys.shape[1]), _i32(keys.shape[3]),
                                                     _i32(n), np.int64(total), out))
    return out


def combine(t: DeviceTables, a: Array, conv: Array, base: Array | None, perms: Index, items: Index, rows: Index,
            c: Array, c_sh: Array) -> Array:
    """``(a - conv) * c (+ base)`` per item (see ``combine_body``): ``conv``'s shape."""
    count, r_count, n = conv.shape
    out = t.xp.empty_like(conv)
    total = conv.size
    t.launcher()("combine_k", _grid(total), (BLOCK,), (a, conv, a if base is None else base, perms, items, rows, t.q, c,
                                                    c_sh, _i32(r_count), _i32(n), np.int64(total), out))
    return out


def _pointers(t: DeviceTables, arrays: Sequence[Array | KeyWords]) -> list[np.uint64]:
    ptrs = [t.launcher().pointer(a) for a in arrays]
    return ptrs + [np.uint64(0)] * (MAX_TERMS - len(ptrs))


def dot(t: DeviceTables, cts: Sequence[Array], pts: Sequence[KeyWords], rows: Index, acc: Array | None = None) -> Array:
    """``sum_i cts[i] * pts[i]`` (ciphertexts ``(size, R, N)``, plaintexts ``(R, N)`` of 64-bit
    words, or all of 32-bit ones: ``dot32_k``), at most MAX_TERMS terms a launch, chained
    through the accumulator beyond that."""
    kernel = "dot32_k" if pts[0].dtype == np.uint32 else "dot_k"
    shape = cts[0].shape
    r_count, n = shape[-2], shape[-1]
    total = int(np.prod(shape))
    for start in range(0, len(cts), MAX_TERMS):
        c_part, p_part = cts[start:start + MAX_TERMS], pts[start:start + MAX_TERMS]
        out: Array = t.xp.empty(shape, dtype=t.xp.uint64)
        t.launcher()(kernel, _grid(total), (BLOCK,), (out if acc is None else acc, _i32(int(acc is not None)), rows,
                                                      t.q, t.qinv, _i32(r_count), _i32(n), _i32(len(c_part)),
                                                      np.int64(total), out, *_pointers(t, c_part),
                                                      *_pointers(t, p_part)),
                     keep=tuple(c_part) + tuple(p_part))
        acc = out
    if acc is None:   # cts[0] above: there is one launch at least
        raise AssertionError("dot of no terms")
    return acc


def tensor(t: DeviceTables, a: Array, b: Array, rows: Index) -> Array:
    """``(a0 b0, a0 b1 + a1 b0, a1 b1)`` of two size-2 ciphertexts ``(2, R, N)``."""
    _, r_count, n = a.shape
    out = t.xp.empty((3, r_count, n), dtype=t.xp.uint64)
    total = r_count * n
    t.launcher()("tensor_k", _grid(total), (BLOCK,), (a, b, rows, t.q, t.qinv, _i32(r_count), _i32(n), np.int64(total),
                                                   out))
    return out


def lincomb(t: DeviceTables, x: Array, c: Array, c_sh: Array, rows: Index) -> Array:
    """``out[r] = sum_p c[r, p] * x[p]`` (per row constants; ``x``: ``(P, S, R, N)``, ``c``:
    ``(R_out, P, R)``): ``(R_out, S, R, N)`` in one launch."""
    p_count, size, r_count, n = x.shape
    out = t.xp.empty((c.shape[0], size, r_count, n), dtype=t.xp.uint64)
    total = out.size
    t.launcher()("lincomb_k", _grid(total), (BLOCK,), (x, c, c_sh, rows, t.q, _i32(p_count), _i32(size), _i32(r_count),
                                                    _i32(n), np.int64(total), out))
    return out


def gather(t: DeviceTables, arrays: Sequence[Array]) -> Array:
    """The arrays (one shape) stacked on a new first axis, MAX_TERMS a launch."""
    shape = arrays[0].shape
    each = int(np.prod(shape))
    out = t.xp.empty((len(arrays),) + tuple(shape), dtype=t.xp.uint64)
    flat = out.reshape(len(arrays), each)
    for start in range(0, len(arrays), MAX_TERMS):
        part = arrays[start:start + MAX_TERMS]
        dst = flat[start:start + len(part)]
        t.launcher()("gather_k", _grid(dst.size), (BLOCK,), (np.int64(each), np.int64(dst.size), dst,
                                                         *_pointers(t, part)), keep=tuple(part))
    return out


def permute(t: DeviceTables, a: Array, perm: Index) -> Array:
    out = t.xp.empty_like(a)
    t.launcher()("permute_k", _grid(a.size), (BLOCK,), (a, perm, _i32(a.shape[-1]), np.int64(a.size), out))
    return out
