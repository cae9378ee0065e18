"""Every hot loop, three implementations, one answer: the NumPy reference, the numba twin and
the CUDA kernels (the ``cuda-host`` kernel set: kernels.cu compiled for the CPU, driven by the
GPU's launch code) agree bit for bit; the reference agrees with Python integers. The batched
ops are checked the same way: fused CUDA kernels against their composition from primitives."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.crypto.ckks.gpu.arith import Arith
from cryptoffload.crypto.ckks.gpu.chain import prime_chain
from cryptoffload.crypto.ckks.gpu.ring import RnsRing
from cryptoffload.errors import ConfigError


# three 20-bit data primes, two 30-bit ones, special primes of 30 bits: mixed sizes on purpose
RING = RnsRing(prime_chain(4096, (40, 20, 30, 30, 60)))
SEEDS = settings(max_examples=4, deadline=None)


@pytest.fixture(scope="module")
def impls(host_lib):
    return Arith(RING, np, "ref"), Arith(RING, np, "numba"), Arith(RING, np, "cuda-host")


def rand(rng, rows, lead=()):
    q = RING.q[rows]
    return rng.integers(0, 2 ** 62, size=lead + (len(rows), RING.n)).astype(np.uint64) % q[:, None]


def agree(impls, fn):
    ref, *others = [fn(a) for a in impls]
    for got in others:
        assert got.dtype == np.uint64 and np.array_equal(got, ref)
    return ref


@SEEDS
@given(seed=st.integers(0, 2 ** 32), lead=st.sampled_from([(), (2,), (3, 1)]))
def test_elementwise_and_transforms(impls, seed, lead):
    rng = np.random.default_rng(seed)
    rows = np.array([0, 2, 3, 5, 6])
    a, b = rand(rng, rows, lead), rand(rng, rows, lead)
    c, c_sh = RING.constant(123456789, rows)
    agree(impls, lambda ar: ar.add(a, b, rows))
    agree(impls, lambda ar: ar.sub(a, b, rows))
    agree(impls, lambda ar: ar.neg(a, rows))
    agree(impls, lambda ar: ar.mul(a, b, rows))
    agree(impls, lambda ar: ar.mul_const(a, ar.asarray(c), ar.asarray(c_sh), rows))
    fwd = agree(impls, lambda ar: ar.ntt(a.copy(), rows))
    back = agree(impls, lambda ar: ar.intt(fwd.copy(), rows))
    assert np.array_equal(back, a)
    agree(impls, lambda ar: ar.permute(a, 5 ** 7 % (2 * RING.n)))


def test_small_rings_run_the_shared_memory_stages_alone(host_lib, monkeypatch):
    from cryptoffload.crypto.ckks.gpu import arith_cuda

    monkeypatch.setattr(arith_cuda, "MAX_CHUNK_THREADS", 64)   # N/2 > T: global and shared stages
    ring = RnsRing(prime_chain(1024, (30, 20, 30)))
    rows = np.arange(ring.rows)
    a = np.random.default_rng(5).integers(0, 2 ** 62, size=(ring.rows, ring.n)).astype(np.uint64) % ring.q[:, None]
    ref, cu = Arith(ring, np, "ref"), Arith(ring, np, "cuda-host")
    f_ref = ref.ntt(a.copy(), rows)
    assert np.array_equal(cu.ntt(a.copy(), rows), f_ref)
    assert np.array_equal(cu.intt(f_ref.copy(), rows), a)


def gpu_ordered(monkeypatch, ring: RnsRing = RING) -> Arith:
    """A cuda-host Arith whose launches run the GPU's order (kernels_host.cpp's *_gpu_order: every
    block and thread the GPU would run), where the plain cuda-host launches run the CPU's."""
    from cryptoffload.crypto.ckks.gpu.launch import HostExecutor

    ex = HostExecutor()
    plain_kernel = ex.kernel
    monkeypatch.setattr(ex, "kernel", lambda name: plain_kernel(f"{name}_gpu_order"))
    ar = Arith(ring, np, "cuda-host")
    ar.launcher.executor = ex
    return ar


@pytest.mark.parametrize("threads", [64, 1024])
def test_the_cpu_ntt_launches_equal_the_gpus_block_schedules(host_lib, monkeypatch, threads):
    """The cuda-host NTT launches run a CPU loop order (kernels_host.cpp); the GPU's own block
    schedules (ntt_upper_block ...) are compiled there too (*_gpu_order): launch by launch, out of
    place and in place, on chosen rows, both give the same words."""
    from cryptoffload.crypto.ckks.gpu import arith_cuda

    monkeypatch.setattr(arith_cuda, "MAX_CHUNK_THREADS", threads)
    gpu_order, cpu_order = gpu_ordered(monkeypatch), Arith(RING, np, "cuda-host")
    rng = np.random.default_rng(threads)
    buf = rand(rng, np.arange(RING.rows), (2,))
    offsets, primes = np.array([0, 3, 9, 12]), np.array([0, 3, 2, 5])
    for inverse in (False, True):
        for src in (None, buf.copy()):
            outs = []
            for ar in (gpu_order, cpu_order):
                out = buf.copy()
                ar.transform(out, offsets, primes, inverse, src=None if src is None else src.copy())
                outs.append(out)
            assert np.array_equal(outs[0], outs[1]), (inverse, src is None)


@SEEDS
@given(seed=st.integers(0, 2 ** 32), exact=st.booleans())
def test_base_conversion(impls, seed, exact):
    rng = np.random.default_rng(seed)
    src, dst = (0, 1, 2), (3, 5, 6)
    x = rand(rng, np.array(src))
    out = agree(impls, lambda ar: ar.base_convert(x, src, dst, exact=exact))
    qs = [RING.primes[s] for s in src]
    big = math.prod(qs)
    for j in range(0, RING.n, 97):   # against the CRT with Python integers
        value = sum(int(x[i, j]) * (big // q) * pow(big // q, -1, q) for i, q in enumerate(qs)) % big
        if exact:
            value = value - big if value >= big / 2 else value
        for d, t in enumerate(dst):
            got = int(out[d, j])
            if exact:
                assert got == value % RING.primes[t]
            else:   # the fast conversion is off by a multiple u * Qs, 0 <= u < S
                assert any(got == (value + u * big) % RING.primes[t] for u in range(len(src)))


@SEEDS
@given(seed=st.integers(0, 2 ** 32), digits=st.integers(1, 4))
def test_key_switching_inner_product(impls, seed, digits):
    rng = np.random.default_rng(seed)
    rows = np.array([0, 1, 2, 5, 6])
    d = rand(rng, rows, (digits,))
    key = rand(rng, np.arange(RING.rows), (4, 2))
    out = agree(impls, lambda ar: ar.ks_inner(d, key, rows, rows))
    q = RING.q[rows][:, None]
    want0 = sum((d[g] * key[g, 0][rows]) % q for g in range(digits)) % q
    assert np.array_equal(out[0], want0)


def test_kernel_sets_are_bound_to_their_array_module():
    with pytest.raises(ConfigError, match="does not run on numpy"):
        Arith(RING, np, "cuda")
    assert Arith(RING, np).kernels in ("cuda-host", "numba")   # the launch code wherever g++ is
    with pytest.raises(ConfigError, match="unknown kernel set"):
        Arith(RING, np, "fortran")


# -- the batched ops: one launch (a few for a transform) in the CUDA kernel sets ------------------

@SEEDS
@given(seed=st.integers(0, 2 ** 32), inverse=st.booleans())
def test_transform_of_chosen_rows_in_and_out_of_place(impls, seed, inverse):
    rng = np.random.default_rng(seed)
    rows = np.array([0, 2, 3, 5, 6])
    src = rand(rng, rows, (3,))
    offsets = np.array([1, 4, 7, 13, 14])            # rows of the (15, N) flattening
    primes = np.tile(rows, 3)[offsets]

    def run(ar, out_of_place):
        buf = np.zeros_like(src) if out_of_place else src.copy()
        ar.transform(buf, offsets, primes, inverse, src=src if out_of_place else None)
        return buf

    in_place = agree(impls, lambda ar: run(ar, False))
    out = agree(impls, lambda ar: run(ar, True))
    assert np.array_equal(in_place.reshape(-1, RING.n)[offsets], out.reshape(-1, RING.n)[offsets])
    untouched = np.setdiff1d(np.arange(15), offsets)
    assert np.array_equal(in_place.reshape(-1, RING.n)[untouched], src.reshape(-1, RING.n)[untouched])


@SEEDS
@given(seed=st.integers(0, 2 ** 32))
def test_many_conversions_in_one_plan(impls, seed):
    from cryptoffload.crypto.ckks.gpu.convplan import ConvJob

    rng = np.random.default_rng(seed)
    x = rand(rng, np.array([0, 1, 2, 3, 5, 6]), (2,))     # 12 rows
    jobs = [ConvJob(0, (0, 1, 2), 0, (0, 1, 2), (3, 5, 6)), ConvJob(9, (3,), 3, (2, 0), (0, 1), exact=True),
            ConvJob(6, (0, 1, 2), 5, (0, 1, 2), (0, 3, 6), exact=False)]

    def run(ar):
        out = np.zeros((8, RING.n), dtype=np.uint64)
        return ar.convert(x, ar.conv_plan(("t", seed), lambda: jobs), out)

    out = agree(impls, run)
    flat = x.reshape(-1, RING.n)
    want = Arith(RING, np, "ref").base_convert(flat[0:3], (0, 1, 2), (3, 5, 6), exact=True)
    assert np.array_equal(out[0:3], want)


@SEEDS
@given(seed=st.integers(0, 2 ** 32))
def test_key_switching_items_with_permutations(impls, seed):
    rng = np.random.default_rng(seed)
    qp = np.array([0, 1, 2, 5, 6])
    digits = rand(rng, qp, (2, 3))                        # 2 digit sets of 3 digits
    keys = rand(rng, np.arange(RING.rows), (3, 4, 2))      # 3 keys of 4 digits
    perms = np.stack([RING.galois_perm(5 ** k % (2 * RING.n)) for k in (1, 3)])
    items = np.array([[0, 2, -1], [1, 0, 1], [0, 1, 0]])
    out = agree(impls, lambda ar: ar.ks_items(digits, ar.asarray(keys), ar.asarray(perms), items, qp))
    ref = Arith(RING, np, "ref")
    want = ref.ks_inner(ref.permute(digits[1], 5 ** 3 % (2 * RING.n)), keys[0], qp, qp)
    assert np.array_equal(out[1], want)


def test_cpu_conversions_and_products_equal_the_gpus_threads(host_lib, monkeypatch):
    """conv_jobs_k and ks_items_k run block by block on the CPU; the GPU's thread-per-coefficient
    order gives the same words, also for a compact key read at other rows."""
    from cryptoffload.crypto.ckks.gpu.convplan import ConvJob

    gpu_order, cpu_order = gpu_ordered(monkeypatch), Arith(RING, np, "cuda-host")
    rng = np.random.default_rng(11)
    x = rand(rng, np.arange(RING.rows), (2,))
    jobs = [ConvJob(0, (0, 1, 2), 0, (0, 1, 2, 3), (3, 4, 5, 6)), ConvJob(7, (0, 1, 2, 3, 4), 4, (1, 0), (5, 6)),
            ConvJob(9, (2, 3), 6, (0, 1), (0, 6), exact=False)]
    convs = [ar.convert(x, ar.conv_plan(("cpu", 1), lambda: jobs), np.zeros((8, RING.n), dtype=np.uint64))
             for ar in (gpu_order, cpu_order)]
    assert np.array_equal(*convs)
    qp, key_rows = np.array([0, 1, 5]), np.array([0, 1, 2])
    digits = rand(rng, qp, (2, 2))
    keys = rand(rng, qp, (2, 2, 2))                         # compact: only the rows qp, at 0 .. 2
    perms = np.stack([RING.galois_perm(5)])
    items = np.array([[0, 1, -1], [1, 0, 0]])
    prods = [ar.ks_items(digits, keys, ar.asarray(perms), items, qp, key_rows) for ar in (gpu_order, cpu_order)]
    assert np.array_equal(*prods)
    ref = Arith(RING, np, "ref")
    assert np.array_equal(prods[1][0], ref.ks_inner(digits[0], keys[1], key_rows, qp))


@SEEDS
@given(seed=st.integers(0, 2 ** 32))
def test_combine_subtracts_scales_and_adds_a_permuted_base(impls, seed):
    rng = np.random.default_rng(seed)
    rows = np.array([0, 1, 2])
    a = rand(rng, np.arange(5), (3,))                     # (3, 5, N): first 3 rows per item used
    conv = rand(rng, rows, (3,))
    base = rand(rng, rows, (2,))
    c, c_sh = RING.inverse_of(RING.p_product, rows)
    perms = np.stack([RING.galois_perm(5)])
    n = RING.n
    items = np.array([[0, 0, 0], [5 * n, -1, -1], [10 * n, 3 * n, -1]])
    out = agree(impls, lambda ar: ar.combine(a, conv, base, ar.asarray(perms), items, rows, ar.asarray(c),
                                             ar.asarray(c_sh)))
    ref = Arith(RING, np, "ref")
    want = ref.add(ref.mul_const(ref.sub(a[0, :3], conv[0], rows), c, c_sh, rows), ref.permute(base[0], 5), rows)
    assert np.array_equal(out[0], want)


@SEEDS
@given(seed=st.integers(0, 2 ** 32), terms=st.sampled_from([1, 3, 16, 17, 35]))
def test_dot_sum_tensor_and_gather(impls, seed, terms):
    rng = np.random.default_rng(seed)
    rows = np.array([0, 2, 3, 5])
    cts = [rand(rng, rows, (2,)) for _ in range(terms)]
    pts = [rand(rng, rows) for _ in range(terms)]
    dot = agree(impls, lambda ar: ar.dot(cts, pts, rows))
    q = RING.q[rows][:, None]
    assert np.array_equal(dot[1], sum((c[1] * p) % q for c, p in zip(cts, pts)) % q)
    total = agree(impls, lambda ar: ar.sum(cts, rows))
    assert np.array_equal(total, sum(cts) % q)   # each < 2^31: no overflow for 35 terms
    agree(impls, lambda ar: ar.tensor(cts[0], cts[-1], rows))
    stacked = agree(impls, lambda ar: ar.gather(cts))
    assert np.array_equal(stacked, np.stack(cts))


def test_the_launch_code_counts_its_launches(host_lib):
    cu = Arith(RING, np, "cuda-host")
    rows = np.arange(RING.rows)
    a = rand(np.random.default_rng(0), rows)
    before = cu.launches
    cu.add(a, a, rows)
    cu.dot([a] * 17, [a] * 17, rows)                      # 16 terms a launch
    cu.ntt(a.copy(), rows)           # N = 4096: one global stage (h = 2048), then the shared-memory tail
    assert cu.launches - before == 1 + 2 + 2
    assert Arith(RING, np, "numba").launches is None


@SEEDS
@given(seed=st.integers(0, 2 ** 32))
def test_a_dense_layer_of_constants(impls, seed):
    from cryptoffload.crypto.ckks.gpu.ring import shoup

    rng = np.random.default_rng(seed)
    rows = np.array([0, 2, 3])
    x = np.stack([rand(rng, rows, (2,)) for _ in range(5)])          # (P=5, S=2, R=3, N)
    c = rng.integers(0, 2 ** 40, size=(3, 5, 3)).astype(np.uint64) % RING.q[rows]
    c_sh = shoup(c, RING.q[rows])
    out = agree(impls, lambda ar: ar.lincomb(x, ar.asarray(c), ar.asarray(c_sh), rows))
    q = RING.q[rows][:, None]
    want = sum((x[p, 1] * c[2, p][:, None]) % q for p in range(5)) % q
    assert np.array_equal(out[2, 1], want)


def test_every_kernel_set_provides_its_protocol():
    """The registry loads each kernel module as its protocol (mypy checks the signatures); at run
    time every op the protocol names is there, so no kernel set is reached by a name it lacks."""
    from cryptoffload.crypto.ckks.gpu.arith import KERNEL_SETS
    from cryptoffload.crypto.ckks.gpu.kernelset import FusedKernels, LoopKernels

    def ops(protocol: type) -> set[str]:
        return {name for klass in protocol.__mro__ if klass.__module__.endswith(".kernelset")
                for name, value in vars(klass).items() if callable(value) and not name.startswith("_")}

    assert {"add", "base_convert", "permute"} <= ops(LoopKernels) and "transform" in ops(FusedKernels)
    for name, entry in KERNEL_SETS.items():
        assert (entry.loops is None) != (entry.fused is None), name
        if entry.loops is not None:
            impl, wanted = entry.loops(), ops(LoopKernels)
        else:
            assert entry.fused is not None and entry.executor is not None
            impl, wanted = entry.fused(), ops(FusedKernels)
        assert all(callable(getattr(impl, op, None)) for op in wanted), name
