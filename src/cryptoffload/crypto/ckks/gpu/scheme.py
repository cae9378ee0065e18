"""Leveled RNS-CKKS on raw arrays: keys, encoding, encryption and every homomorphic op.

No checks and no bookkeeping beyond levels and scales: :mod:`.backend` wraps this with the
project's CKKS interface (ownership, level and scale checks, key registry, serialisation).
One implementation for the CPU twin and the GPU -- arrays live in ``xp`` (NumPy or CuPy) and
every hot loop goes through :class:`~.arith.Arith`.

Representation: a ciphertext is ``(size, R, N)`` residues in NTT form over the first ``R`` data
rows (``R = chain.limbs(level)``), a plaintext ``(R, N)``. Public and key-switching keys cover
all rows (data and special); the secret key is kept both as its small coefficients (host) and
in NTT form over all rows.

Encryption is public-key RLWE at the special level (SEAL's ``encrypt_zero_asymmetric``):
``(v pk_0 + e_0, v pk_1 + e_1)`` over ``Q_l P``, divided by ``P`` (so the fresh noise is a few
units instead of ``|v e|``), then the plaintext is added. Rescaling divides by the level's
last prime group with rounding (one prime at a time: ``(c - [c]_q) / q`` with ``[c]_q`` the
centred remainder), as SEAL's ``divide_and_round_q_last``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from types import ModuleType
from typing import Hashable, Sequence, overload

import numpy as np

from cryptoffload import cuda
from cryptoffload.crypto.ckks.gpu import keyswitch
from cryptoffload.crypto.ckks.gpu.arith import Arith
from cryptoffload.crypto.ckks.gpu.encoder import CrtDecoder, SpecialFft, to_residues
from cryptoffload.crypto.ckks.gpu.chain import PrimeChain
from cryptoffload.crypto.ckks.gpu.convplan import ConvJob
from cryptoffload.crypto.ckks.gpu.kernelset import Array
from cryptoffload.crypto.ckks.gpu.keystore import EvalKeys
from cryptoffload.crypto.ckks.gpu.ring import RnsRing, shoup
from cryptoffload.crypto.ckks.gpu.sampling import Sampler


@dataclass(repr=False)
class RawCt:
    """A ciphertext: ``data`` ``(size, R, N)`` NTT-form residues at logical ``level`` and ``scale``."""

    data: Array
    level: int
    scale: float

    @property
    def size(self) -> int:
        return int(self.data.shape[0])

    def __repr__(self) -> str:
        return f"<RawCt size {self.size} level {self.level} scale 2^{np.log2(self.scale):.2f}>"


@dataclass(repr=False)
class RawPt:
    """A plaintext: ``data`` ``(R, N)`` NTT-form residues at ``level`` and ``scale``."""

    data: Array
    level: int
    scale: float

    def __repr__(self) -> str:
        return f"<RawPt level {self.level} scale 2^{np.log2(self.scale):.2f}>"


@dataclass(repr=False, eq=False)
class SecretKey:
    """The secret key; its repr never shows it (it could reach a log or a traceback), and
    :meth:`wipe` overwrites both copies with zeros (before the device memory goes back to
    CuPy's pool, which hands it to the next allocation as it is)."""

    small: np.ndarray  # (N,) int8 coefficients in {-1, 0, 1}, host
    ntt: Array         # (K, N) NTT form over every row, device

    def __repr__(self) -> str:
        return "<SecretKey (hidden)>"

    def wipe(self) -> None:
        self.small.fill(0)
        wipe(self.ntt)


def wipe(a: Array) -> None:
    """Overwrite a secret-derived array with zeros and wait until that is done (on a GPU the
    fill is queued on the current stream; the memory must not be reused before it ran)."""
    a.fill(0)
    if not isinstance(a, np.ndarray):
        cuda.cupy().cuda.get_current_stream().synchronize()


class RnsScheme:
    """The scheme over one prime chain, one array module and one kernel set."""

    def __init__(self, chain: PrimeChain, xp: ModuleType, kernels: str | None = None) -> None:
        self.ring = RnsRing(chain)
        self.ar = Arith(self.ring, xp, kernels)
        self.xp = xp
        self.fft = SpecialFft(self.ring.n)
        self.sampler = Sampler()
        self._crt: dict[int, CrtDecoder] = {}
        self.top = len(chain.data_groups) - 1

    @property
    def n(self) -> int:
        return self.ring.n

    def rows(self, level: int) -> np.ndarray:
        return self.ring.data_rows(level)

    # -- small polynomials --------------------------------------------------------------------
    def small_to_ntt(self, coeffs: np.ndarray, rows: np.ndarray) -> Array:
        """Integer coefficients (host, ``(..., N)``) to NTT-form residues over ``rows``: ``(..., R, N)``.
        The host residues are zeroed once on the device (the coefficients may be a secret key's)."""
        q = self.ring.q[rows].astype(np.int64)
        res = (coeffs.astype(np.int64)[..., None, :] % q[:, None]).astype(np.uint64)
        dev = self.ar.asarray(res)
        if dev is res:   # NumPy: the "device" array is this one
            dev = res.copy()
        res.fill(0)
        return self.ar.ntt(dev, rows)

    # -- keys ---------------------------------------------------------------------------------
    def gen_secret(self) -> SecretKey:
        small = self.sampler.ternary(self.n).astype(np.int8)
        return SecretKey(small, self.small_to_ntt(small, np.arange(self.ring.rows)))

    def _rlwe_zero(self, s_ntt: Array) -> tuple[Array, Array]:
        """``(-a s + e, a)`` over every row, ``a`` uniform (uniform residues are uniform in
        either domain, so ``a`` is drawn directly in NTT form)."""
        all_rows = np.arange(self.ring.rows)
        a = self.ar.asarray(self.sampler.uniform(self.ring.primes, self.n))
        e = self.small_to_ntt(self.sampler.gaussian(self.n), all_rows)
        b = self.ar.sub(e, self.ar.mul(a, s_ntt, all_rows), all_rows)
        return b, a

    def is_key_pair(self, sk: SecretKey, pk: Array) -> bool:
        """Whether ``pk_0 + pk_1 s`` is the small error it must be (a loaded secret key checked
        against the public key: a mismatch would decrypt everything to noise)."""
        row = np.array([0])
        e = self.ar.add(pk[0, :1], self.ar.mul(pk[1, :1], sk.ntt[:1], row), row)
        coeff = self.ar.to_host(self.ar.intt(e, row))[0].astype(np.int64)
        q = int(self.ring.q[0])
        centred = np.where(coeff > q // 2, coeff - q, coeff)
        return bool(np.max(np.abs(centred)) <= 19)

    def gen_public(self, sk: SecretKey) -> Array:
        b, a = self._rlwe_zero(sk.ntt)
        return self.xp.stack([b, a])

    def gen_switch(self, sk: SecretKey, s_from: Array) -> Array:
        """Key switching key from ``s_from`` (NTT form, every row) to ``sk``: ``(G, 2, K, N)``."""
        ring = self.ring
        out = []
        for rows in ring.digits:
            b, a = self._rlwe_zero(sk.ntt)
            r = np.array(rows)
            pmod, pmod_sh = self.ar.const(("pmod", rows), lambda: ring.constant(ring.p_product, r))
            part = s_from[r]
            scaled = self.ar.mul_const(part, pmod, pmod_sh, r)
            b[r] = self.ar.add(b[r], scaled, r)
            wipe(part)   # copies of (a multiple of) the secret
            wipe(scaled)
            out.append(self.xp.stack([b, a]))
        return self.xp.stack(out)

    def gen_relin(self, sk: SecretKey) -> Array:
        all_rows = np.arange(self.ring.rows)
        return self._switch_from_temporary(sk, self.ar.mul(sk.ntt, sk.ntt, all_rows))

    def gen_galois(self, sk: SecretKey, elt: int) -> Array:
        return self._switch_from_temporary(sk, self.ar.permute(sk.ntt, elt))

    def _switch_from_temporary(self, sk: SecretKey, s_from: Array) -> Array:
        """:meth:`gen_switch` from a key derived from the secret (s^2, an automorphism of s),
        wiped afterwards like the secret itself."""
        try:
            return self.gen_switch(sk, s_from)
        finally:
            wipe(s_from)

    def galois_elt(self, steps: int) -> int:
        """Galois element of a left rotation by ``steps``: ``5**steps mod 2N``."""
        return pow(5, steps % (self.n // 2), 2 * self.n)

    @property
    def conj_elt(self) -> int:
        return 2 * self.n - 1

    # -- encoding -------------------------------------------------------------------------------
    def coefficients(self, slots: np.ndarray, scale: float) -> np.ndarray:
        """Real coefficients of the encoding of complex ``slots`` at ``scale`` (host, unrounded)."""
        return self.fft.encode(slots, scale)

    def encode(self, slots: np.ndarray, level: int, scale: float) -> RawPt:
        return self.encode_coefficients(self.coefficients(slots, scale), level, scale)

    def encode_coefficients(self, coeffs: np.ndarray, level: int, scale: float) -> RawPt:
        """A plaintext from real coefficients (rounded here) at ``level``/``scale``."""
        rows = self.rows(level)
        res = to_residues(coeffs, self.ring.q[rows].tolist())
        return RawPt(self.ar.ntt(self.ar.asarray(res), rows), level, scale)

    def decode_poly(self, poly: Array, level: int, scale: float) -> np.ndarray:
        """Complex slots of an NTT-form polynomial at ``level``/``scale``."""
        rows = self.rows(level)
        coeff = self.ar.to_host(self.ar.intt(poly.copy(), rows))
        crt = self._crt.get(level)
        if crt is None:
            crt = self._crt[level] = CrtDecoder(self.ring.q[rows].tolist())
        return self.fft.decode(crt.decode(coeff), scale)

    # -- encryption -------------------------------------------------------------------------------
    def encrypt(self, pt: RawPt, pk: Array) -> RawCt:
        ar, level = self.ar, pt.level
        qp = self.ring.qp_rows(level)
        v = self.small_to_ntt(self.sampler.ternary(self.n), qp)
        e = self.small_to_ntt(np.stack([self.sampler.gaussian(self.n), self.sampler.gaussian(self.n)]), qp)
        c = ar.add(ar.mul(self.xp.stack([v, v]), ar.contig(pk[:, qp]), qp), e, qp)
        out = keyswitch.mod_down(ar, c[None], level, ar.contig(pt.data), [(0, -1), (-1, -1)])
        return RawCt(out[0], level, pt.scale)

    def decrypt(self, ct: RawCt, sk: SecretKey) -> np.ndarray:
        """Complex slots of ``ct`` (any size: ``c0 + c1 s + c2 s^2 + ...``)."""
        ar, rows = self.ar, self.rows(ct.level)
        s = sk.ntt[: len(rows)]   # the data rows are the first ones: a view, not a copy of the key
        acc = ct.data[ct.size - 1]
        for i in range(ct.size - 2, -1, -1):             # Horner in s
            acc = ar.add(ar.mul(acc, s, rows), ct.data[i], rows)
        return self.decode_poly(acc, ct.level, ct.scale)

    # -- arithmetic ---------------------------------------------------------------------------------
    def add(self, a: RawCt, b: RawCt) -> RawCt:
        rows = self.rows(a.level)
        if a.size == b.size:
            return RawCt(self.ar.add(a.data, b.data, rows), a.level, a.scale)
        big, small = (a, b) if a.size >= b.size else (b, a)
        return RawCt(self.ar.add(big.data, self._padded(small.data, big.size, a.level), rows), a.level, a.scale)

    def _zeros(self, level: int) -> Array:
        """A zero polynomial at ``level`` (made once)."""
        limbs = self.ring.chain.limbs(level)
        return self.ar.const(("zeros", limbs), lambda: (np.zeros((limbs, self.n), dtype=np.uint64),))[0]

    def _padded(self, parts: Array, size: int, level: int) -> Array:
        """``parts`` (``(k, R, N)`` or one ``(R, N)`` polynomial) followed by zero polynomials up
        to ``size`` (one launch): what adds a plaintext or a smaller ciphertext to a ciphertext."""
        rows = [parts] if parts.ndim == 2 else [parts[i] for i in range(parts.shape[0])]
        return self.ar.gather(rows + [self._zeros(level)] * (size - len(rows)))

    def add_many(self, cts: Sequence[RawCt]) -> RawCt:
        """The sum of ciphertexts of one level, scale and size (one launch per 16)."""
        a = cts[0]
        return RawCt(self.ar.sum([c.data for c in cts], self.rows(a.level)), a.level, a.scale)

    def negate(self, a: RawCt) -> RawCt:
        return RawCt(self.ar.neg(a.data, self.rows(a.level)), a.level, a.scale)

    def sub(self, a: RawCt, b: RawCt) -> RawCt:
        return self.add(a, self.negate(b))

    def add_plain(self, a: RawCt, p: RawPt) -> RawCt:
        rows = self.rows(a.level)
        return RawCt(self.ar.add(a.data, self._padded(p.data, a.size, a.level), rows), a.level, a.scale)

    def sub_plain(self, a: RawCt, p: RawPt) -> RawCt:
        rows = self.rows(a.level)
        return RawCt(self.ar.sub(a.data, self._padded(p.data, a.size, a.level), rows), a.level, a.scale)

    def mul_plain(self, a: RawCt, p: RawPt) -> RawCt:
        return self.mul_plain_sum([(a, p)])

    def mul_plain_sum(self, terms: Sequence[tuple[RawCt, RawPt]]) -> RawCt:
        """``sum_i ct_i * pt_i`` (one launch per 16 terms)."""
        a, p = terms[0]
        data = self.ar.dot([c.data for c, _ in terms], [q.data for _, q in terms], self.rows(a.level))
        return RawCt(data, a.level, a.scale * p.scale)

    def mul_scalar_sums(self, cts: Sequence[RawCt], weights: np.ndarray, scale: float) -> list[RawCt]:
        """``[sum_p weights[r, p] * cts[p] for r]`` in one launch (after one gather), each weight the
        constant plaintext encoding gives it -- ``round(w * scale)`` as coefficient 0, so its NTT
        form is that integer in every position -- reduced per row prime (``|w * scale| < 2**62``)."""
        level, rows = cts[0].level, self.rows(cts[0].level)
        ints = np.rint(np.asarray(weights, dtype=np.float64) * scale).astype(np.int64)
        q = self.ring.q[rows]

        def tables() -> tuple[np.ndarray, np.ndarray]:
            c = (ints[..., None] % q.astype(np.int64)).astype(np.uint64)      # (R_out, P, R)
            return c, shoup(c, q)

        key = ("lincomb", level, ints.shape, hashlib.blake2b(ints.tobytes(), digest_size=16).digest())
        c, c_sh = self.ar.const(key, tables)
        out = self.ar.lincomb(self.ar.gather([ct.data for ct in cts]), c, c_sh, rows)
        return [RawCt(out[r], level, cts[0].scale * scale) for r in range(ints.shape[0])]

    # -- constants ------------------------------------------------------------------------------
    def _row_constant(self, value: int, rows: np.ndarray) -> tuple[Array, Array]:
        """``value mod q_r`` per row, with Shoup quotients, on the device (made once per value)."""
        c, c_sh = self.ar.const(("int", value, len(rows)), lambda: self.ring.constant(value, rows))
        return c, c_sh

    def _times_i(self, data: Array, level: int) -> Array:
        """``data`` (``(..., R, N)``) times ``X**(N/2)``: every slot times ``i``."""
        rows = self.rows(level)
        unit = self.ar.const(("imaginary_unit", len(rows)), lambda: (self.ring.imaginary_unit[: len(rows)].copy(),))[0]
        if data.ndim == 2:
            return self.ar.mul(data, unit, rows)
        return self.ar.gather([self.ar.mul(data[i], unit, rows) for i in range(data.shape[0])])

    def _const_times(self, data: Array, real: int, imag: int, level: int) -> Array:
        """``data * (real + imag X**(N/2))``: the product with the constant polynomial whose slots
        are all ``real + imag i`` (exact: one constant per row, and the monomial's NTT form)."""
        rows = self.rows(level)
        out = self.ar.mul_const(data, *self._row_constant(real, rows), rows)
        if imag:
            turned = self._times_i(self.ar.mul_const(data, *self._row_constant(imag, rows), rows), level)
            out = self.ar.add(out, turned, rows)
        return out

    def mul_const(self, a: RawCt, real: int, imag: int, scale: float) -> RawCt:
        """``a`` times the constant ``(real + imag i) / scale`` in every slot, given as the rounded
        integers ``real``, ``imag`` (a constant encoded at ``scale``): the scale becomes
        ``a.scale * scale``; no level is used (rescale afterwards where the scale needs it)."""
        return RawCt(self._const_times(a.data, real, imag, a.level), a.level, a.scale * scale)

    def add_const(self, a: RawCt, real: int, imag: int) -> RawCt:
        """``a`` plus the constant ``(real + imag i) / a.scale`` in every slot (rounded integers at
        ``a``'s scale)."""
        rows = self.rows(a.level)
        ones = self.ar.const(("ones", len(rows)), lambda: (np.ones((len(rows), self.n), dtype=np.uint64),))[0]
        return self.add_plain(a, RawPt(self._const_times(ones, real, imag, a.level), a.level, a.scale))

    def mul(self, a: RawCt, b: RawCt) -> RawCt:
        """Tensor product of two size-2 ciphertexts: size 3, not relinearised."""
        return RawCt(self.ar.tensor(a.data, b.data, self.rows(a.level)), a.level, a.scale * b.scale)

    def relinearize(self, a: RawCt, keys: EvalKeys) -> RawCt:
        return self.relinearize_many([a], keys)[0]

    def relinearize_many(self, cts: Sequence[RawCt], keys: EvalKeys) -> list[RawCt]:
        """Size-3 ciphertexts of one level to size 2, all in one batched key switch."""
        level, r_count, n = cts[0].level, self.ring.chain.limbs(cts[0].level), self.n
        stage = self.ar.gather([c.data for c in cts])
        relin = keys.index("relin")
        bases = [((3 * b + c) * r_count * n, -1) for b in range(len(cts)) for c in (0, 1)]
        out = keyswitch.switch(self.ar, stage, [(3 * b + 2) * r_count for b in range(len(cts))],
                               [(b, relin, -1) for b in range(len(cts))], keys.stack, keys.perms, level, bases)
        return [RawCt(out[b], level, c.scale) for b, c in enumerate(cts)]

    def rescale(self, a: RawCt, divisor: float) -> RawCt:
        """Drop the level's prime group (one prime at a time, rounding); the scale is divided
        by ``divisor`` (the group's product, as the bookkeeping knows it)."""
        return self.rescale_many([a], [divisor])[0]

    def rescale_many(self, cts: Sequence[RawCt], divisors: Sequence[float]) -> list[RawCt]:
        """:meth:`rescale` of ciphertexts of one level and size, batched."""
        data = self.ar.gather([c.data for c in cts])
        limbs = self.ring.chain.limbs(cts[0].level - 1)
        while data.shape[2] > limbs:
            data = self._drop_last(data)
        return [RawCt(data[b], c.level - 1, c.scale / d) for b, (c, d) in enumerate(zip(cts, divisors))]

    def _drop_last(self, data: Array) -> Array:
        """``(B, S, R, N)`` (ours: its last rows are overwritten) to ``(B, S, R - 1, N)``: each
        polynomial minus the centred value of its last row, divided by the last prime (SEAL's
        ``divide_and_round_q_last``; the exact conversion of one row is its centred value)."""
        ar, ring = self.ar, self.ring
        b_count, size, r, n = data.shape
        last, parts = r - 1, b_count * size
        rest = np.arange(last)
        ar.transform(data, np.arange(parts) * r + last, np.full(parts, last), True)
        conv = self.xp.empty((parts, last, n), dtype=self.xp.uint64)

        def jobs() -> list[ConvJob]:
            return [ConvJob(p * r + last, (last,), p * last, tuple(range(last)), tuple(range(last)))
                    for p in range(parts)]

        ar.convert(data, ar.conv_plan(("rescale", r, parts), jobs), conv)
        ar.transform(conv, np.arange(parts * last), np.tile(rest, parts), False)
        qinv, qinv_sh = ar.const(("qlast_inv", r), lambda: ring.inverse_of(int(ring.q[last]), rest))
        items = np.stack([np.arange(parts) * r * n, np.full(parts, -1), np.full(parts, -1)], axis=1)
        out = ar.combine(data, conv, None, ar.table(np.zeros(1)), items, rest, qinv, qinv_sh)
        return out.reshape(b_count, size, last, n)

    @overload
    def drop_to(self, a: RawCt, level: int) -> RawCt: ...

    @overload
    def drop_to(self, a: RawPt, level: int) -> RawPt: ...

    def drop_to(self, a: RawCt | RawPt, level: int) -> RawCt | RawPt:
        """The same value with fewer rows (no rescale): valid modulo any divisor of ``Q``."""
        limbs = self.ring.chain.limbs(level)
        if isinstance(a, RawPt):
            return RawPt(self.ar.contig(a.data[:limbs]), level, a.scale)
        return RawCt(self.ar.contig(a.data[:, :limbs]), level, a.scale)

    # -- automorphisms --------------------------------------------------------------------------
    def automorphism(self, a: RawCt, elt: int, key: Hashable, keys: EvalKeys) -> RawCt:
        """``X -> X**elt`` and a key switch back to ``s`` (a rotation, or conjugation)."""
        return self.automorphisms_each([a], [(elt, key)], keys)[0]

    def automorphisms_each(self, cts: Sequence[RawCt], elts_keys: Sequence[tuple[int, Hashable]],
                           keys: EvalKeys) -> list[RawCt]:
        """One automorphism per ciphertext (each its own element and key), one batched key switch."""
        level, r_count, n = cts[0].level, self.ring.chain.limbs(cts[0].level), self.n
        stage = self.ar.gather([c.data for c in cts])
        perms = [keys.perm_index(elt) for elt, _ in elts_keys]
        items = [(b, keys.index(name), perms[b]) for b, (_, name) in enumerate(elts_keys)]
        bases = [base for b in range(len(cts)) for base in (((2 * b) * r_count * n, perms[b]), (-1, -1))]
        out = keyswitch.switch(self.ar, stage, [(2 * b + 1) * r_count for b in range(len(cts))], items, keys.stack,
                               keys.perms, level, bases)
        return [RawCt(out[b], level, c.scale) for b, c in enumerate(cts)]

    def automorphisms_hoisted(self, a: RawCt, elts_keys: Sequence[tuple[int, Hashable]], keys: EvalKeys) -> list[RawCt]:
        """Several automorphisms of one ciphertext sharing one decomposition of ``c1``."""
        level, r_count = a.level, self.ring.chain.limbs(a.level)
        data = self.ar.contig(a.data)
        perms = [keys.perm_index(elt) for elt, _ in elts_keys]
        items = [(0, keys.index(name), p) for (_, name), p in zip(elts_keys, perms)]
        bases = [base for p in perms for base in ((0, p), (-1, -1))]
        out = keyswitch.switch(self.ar, data, [r_count], items, keys.stack, keys.perms, level, bases)
        return [RawCt(out[k], level, a.scale) for k in range(len(elts_keys))]
