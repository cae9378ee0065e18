"""Ridge regression over Paillier ciphertexts: providers, platform, CSP and the buyer's recovery.

Setting (data trading as in Zhou and Hua, "Hardware offloading of homomorphic encryption and
its application in privacy-preserving computing", Journal of Chinese Computer Systems 2021;
semi-honest parties, the platform and the CSP do not collude; see docs/apps/ridge.md for the
threat model) and method (Giacomelli, Jha, Joye, Page, Yoon, "Privacy-Preserving Ridge Regression with only
Linearly-Homomorphic Encryption", ACNS 2018), as small pure steps per role so that an HTTP
layer or a study can put a network between any two of them:

1. **Keys.** The CSP makes an *upload* key (1024-bit n in Zhou and Hua's workload: a study size)
   and a *solve* key (>= 2048 bits and large enough for step 5's rational reconstruction,
   :func:`~.params.solve_key_bits`) and publishes both public keys (:class:`~.session.RidgeKeys`).
2. **Providers** (:class:`Provider`) encode each record (x in R^d, y) in fixed point with
   ``frac_bits`` f: ``A_i = round(x x^T 2^f)`` and ``b_i = round(y x 2^f)`` entry by entry.
   A is symmetric, so only its upper triangle (d(d+1)/2 values, row-major) and b (d values)
   are sent: 230 values for d = 20 (``symmetric=False`` sends all d^2 + d = 420, as the paper
   does). The values are packed into as few upload-key plaintexts as the slot sizing allows
   (:func:`upload_layout`) and encrypted. Modes: ``"per-record"`` (each record packed and
   encrypted alone, Zhou and Hua's workload) and ``"per-provider"`` (a provider sums its records
   in the clear and sends one packed (A; b); both give the same aggregate exactly, because
   the sums are of the same rounded integers).
3. **Aggregation** (:class:`Aggregator`, the platform or an aggregation proxy in the
   provider's LAN) multiplies ciphertexts plaintext-index-wise: Enc(packed sums).
4. **Unpacking without leaking.** A slot cannot be extracted homomorphically (carries), so the
   CSP must decrypt; to keep the sums from it the platform first adds Enc(packed mask): slot j
   gets ``B + rho_j`` with the bias ``B = 2^(w-1)`` (w the signed slot width) and a uniform
   ``rho_j < 2^(w + stat_bits)``; the slots have the headroom for it (``mask_bits`` in
   :mod:`cryptoffload.crypto.packing`), so the decrypted slot ``T_j + B + rho_j`` is
   non-negative, carries into nothing, and hides T_j up to statistical distance 2^-stat_bits.
   Signed sums are handled by that bias: T_j + B is in [0, 2^w) for every admissible sum, and
   the platform removes B with the mask. The CSP decrypts (upload key), splits the bit fields,
   encrypts each field alone under the *solve* key and returns them; the platform subtracts
   ``B + rho_j`` homomorphically: Enc_solve(sum A_jk), Enc_solve(sum b_j). A contribution the
   CSP leaves out (it does not split) comes with a proof the platform checks
   (:mod:`.proofs`).
5. **Masked solve over Z_n** (n the solve key's modulus). The platform (:class:`TradingPlatform`:
   the platform's computations; "platform" stays the role's name on the command line) adds ``lambda I`` (at
   scale 2^f, so the solution is that of scikit-learn's ``Ridge(alpha=lambda,
   fit_intercept=False)``: minimise ||y - X w||^2 + lambda ||w||^2), draws a uniform
   invertible R (d x d over Z_n) and a uniform r in Z_n^d, and computes Enc(A R) and
   Enc(b + A r): d (d + 1) products of d powers (d^3 + d^2 powers with secret exponents),
   computed as constant-time multi-exponentiations -- the squarings of an output shared by its
   d powers, about 5x fewer products than separate exponentiations (:mod:`.powm`). The CSP decrypts and returns
   ``w' = (A R)^-1 (b + A r) mod n`` (Gaussian elimination mod n; a singular matrix is refused
   with :class:`SingularMatrixError`). Whoever holds R and r (the buyer: the platform sends it
   R, r and the masked system; the CSP sends it w' with the proof that it solves that system,
   :mod:`.proofs`) checks the proof, computes ``w = R w' - r = A^-1 b mod n`` and recovers each
   coefficient as a fraction p/q by rational reconstruction within the bounds of the records
   it was sold; the 2^f scales of A and b cancel.
   The CSP sees only A R (uniform among invertible matrices, whatever A is) and w' (masked by
   R and r); the platform sees only ciphertexts.

Why rational reconstruction works: by Cramer's rule ``w_i = det(A_i) / det(A)`` with A_i the
integer matrix A with column i replaced by b, so each coefficient is a fraction whose
numerator and denominator are bounded by Hadamard's inequality (:func:`solve_bounds`); a
fraction with |p| <= N, 0 < q <= D is the unique one congruent to w_i modulo n when
``n > 2 N D`` (Wang's theorem), and the extended Euclidean algorithm finds it. The buyer uses
N and D themselves (for the records it was sold), not the largest D that n would allow: a
residue that is not such a fraction (a corrupted w') then fails with probability about
1 - 2 N D / n instead of about 1/2.

Ciphertexts travel between roles as plain Python ints (what a serialiser or a native batch
wants); each message names its key by fingerprint and the receiving role checks it. The parties
of one session are wired in one place, :class:`~.session.RidgeSession`, whoever runs them.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable, Iterator, Sequence

import gmpy2
import numpy as np

from cryptoffload.apps.ridge.modular import invertible_mod, rational_reconstruct, solve_mod
from cryptoffload.apps.ridge.phases import Phases, phases_or_new
from cryptoffload.apps.ridge.powm import products_of_powers
from cryptoffload.apps.ridge.proofs import (
    Solution,
    Unpacked,
    check_exclusions,
    exclusion_proof,
    solution_proof,
    verify_solution,
)
from cryptoffload.apps.ridge.params import RidgeParams, check_solve_key, solve_bounds, upload_layout
from cryptoffload.checks import check_int
from cryptoffload.crypto import native
from cryptoffload.crypto.paillier import ENCRYPTION, Encryptor, KeyMismatchError, PrivateKey, PublicKey
from cryptoffload.crypto.packing import PackingError
from cryptoffload.errors import ConfigError, CryptoffloadError

UPLOAD_MODES = ("per-record", "per-provider")


def check_upload_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`UPLOAD_MODES` (how providers encrypt: one packed vector
    per record, as the QAT paper does, or one per provider), else a one-line error."""
    if mode not in UPLOAD_MODES:
        raise ConfigError(f"unknown upload mode {mode!r}; choose one of {', '.join(UPLOAD_MODES)}")
    return mode


@dataclass(frozen=True)
class Upload:
    """One provider message: ``vectors`` packed vectors of ``plaintexts`` ciphertexts each
    (flat, vector-major), standing for ``records`` records."""

    key_fingerprint: bytes
    ciphertexts: list[int]
    vectors: int
    records: int


class Provider:
    """Encodes, packs and encrypts records under the upload key."""

    def __init__(self, params: RidgeParams, upload_pk: PublicKey, *, backend: str = "auto",
                 constant_time: bool = True) -> None:
        self.params = params
        self.public_key = upload_pk
        self.layout = upload_layout(params, upload_pk)
        self.plaintexts = self.layout.plaintexts_needed(params.value_count)
        self._rows, self._cols = params.a_index()
        self._backend = backend
        self._constant_time = constant_time

    def encode(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Records -> (records x value_count) int64: round(x_j x_k 2^f) for the A part, then
        round(y x_j 2^f). Refuses values beyond the declared bounds, naming the record."""
        p = self.params
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64).ravel()
        if X.ndim != 2 or X.shape[1] != p.d:
            raise ConfigError(f"expected records with {p.d} features, got an array of shape {X.shape}")
        if y.shape[0] != X.shape[0]:
            raise ConfigError(f"{X.shape[0]} records but {y.shape[0]} targets")
        bad_x = ~np.isfinite(X) | (np.abs(X) > p.x_bound)
        if bad_x.any():
            i, j = np.argwhere(bad_x)[0]
            raise ConfigError(f"record {i} feature {j} = {X[i, j]!r} is outside the declared |x| <= {p.x_bound}")
        bad_y = ~np.isfinite(y) | (np.abs(y) > p.y_bound)
        if bad_y.any():
            i = int(np.argmax(bad_y))
            raise ConfigError(f"record {i} target {y[i]!r} is outside the declared |y| <= {p.y_bound}")
        scale = float(p.scale)
        out = np.empty((X.shape[0], p.value_count), dtype=np.int64)
        out[:, :p.a_values] = np.rint(X[:, self._rows] * X[:, self._cols] * scale)
        out[:, p.a_values:] = np.rint(y[:, None] * X * scale)
        return out

    def pack(self, values: np.ndarray, weight: int = 1) -> list[int]:
        """Packed plaintexts, ``self.plaintexts`` per row, row-major."""
        return self.layout.pack_array(values, weight)

    def packed_records(self, X: np.ndarray, y: np.ndarray) -> list[int]:
        """Every record encoded and packed on its own: ``self.plaintexts`` per record."""
        return self.pack(self.encode(X, y))

    def encoded_sum(self, X: np.ndarray, y: np.ndarray, chunk: int = 65536) -> np.ndarray:
        """The records' encoded values summed in the clear (``chunk`` records encoded at a
        time); the integer sums are exact, so any chunking gives the same vector."""
        total = np.zeros(self.params.value_count, dtype=np.int64)
        for start in range(0, len(X), chunk):
            total += self.encode(X[start:start + chunk], y[start:start + chunk]).sum(axis=0)
        return total

    def _encryptor(self) -> Encryptor:
        return ENCRYPTION.encryptor(self.public_key, self._backend, constant_time=self._constant_time)

    def encrypt(self, plaintexts: Sequence[int]) -> list[int]:
        return self._encryptor().encrypt_raw(list(plaintexts))

    def encrypt_to_words(self, plaintexts: Sequence[int]) -> bytes:
        """The ciphertexts as the native core's word buffer (what
        :func:`~cryptoffload.crypto._native.core.column_products` reads), never as Python
        integers: the fixed-base table writes them there directly when there is one."""
        return self._encryptor().encrypt_to_words(plaintexts)

    def _upload(self, cts: list[int], vectors: int, records: int) -> Upload:
        return Upload(self.public_key.fingerprint, cts, vectors, records)

    def record_upload(self, X: np.ndarray, y: np.ndarray, phases: Phases | None = None) -> Upload:
        """One Upload of these records, each packed and encrypted on its own; ``phases``
        gets the ``encode`` (encode + pack) and ``encrypt`` seconds."""
        ph = phases_or_new(phases)
        with ph("encode"):
            packed = self.packed_records(X, y)
        with ph("encrypt"):
            cts = self.encrypt(packed)
        return self._upload(cts, len(X), len(X))

    def per_record(self, X: np.ndarray, y: np.ndarray, chunk: int = 4096,
                   phases: Phases | None = None) -> Iterator[Upload]:
        """Zhou and Hua's workload: every record packed and encrypted on its own, in chunks of
        ``chunk`` records (one Upload each, so a million records never sit in memory twice)."""
        check_int("chunk", chunk)
        for start in range(0, len(X), chunk):
            yield self.record_upload(X[start:start + chunk], y[start:start + chunk], phases)

    def summed_upload(self, total: np.ndarray, records: int, phases: Phases | None = None) -> Upload:
        """One packed (A; b) of ``records`` records' summed values, encrypted (``encrypt``
        seconds to ``phases``)."""
        packed = self.pack(np.asarray(total)[None, :], max(records, 1))
        with phases_or_new(phases)("encrypt"):
            return self._upload(self.encrypt(packed), 1, records)

    def per_provider(self, X: np.ndarray, y: np.ndarray, chunk: int = 65536,
                     phases: Phases | None = None) -> Upload:
        """The provider's records summed in the clear (``encode`` seconds to ``phases``), then
        one packed (A; b) encrypted."""
        check_int("chunk", chunk)
        self.params.check_records(len(X))
        with phases_or_new(phases)("encode"):
            total = self.encoded_sum(X, y, chunk)
        return self.summed_upload(total, len(X), phases)


@dataclass(frozen=True)
class Aggregate:
    """Enc(packed sums) under the upload key and how many records they sum."""

    key_fingerprint: bytes
    ciphertexts: list[int]
    records: int


_OVERFLOW = "; refused before adding (the slots would overflow)"


class Aggregator:
    """Multiplies uploads plaintext-index-wise (Paillier addition). Refuses another key's
    uploads and more records in total than ``max_records`` (the guard bits) before adding."""

    def __init__(self, params: RidgeParams, upload_pk: PublicKey) -> None:
        self.params = params
        self.public_key = upload_pk
        self.plaintexts = upload_layout(params, upload_pk).plaintexts_needed(params.value_count)
        self._acc = [gmpy2.mpz(1)] * self.plaintexts
        self.records = 0

    def add(self, upload: Upload) -> None:
        if upload.key_fingerprint != self.public_key.fingerprint:
            raise KeyMismatchError("upload was encrypted under another key than the upload key")
        P = self.plaintexts
        if len(upload.ciphertexts) != upload.vectors * P:
            raise ConfigError(f"upload of {upload.vectors} vectors must hold {upload.vectors * P} ciphertexts, "
                              f"got {len(upload.ciphertexts)}")
        self.params.check_records(upload.records, already=self.records, why=_OVERFLOW)
        self.add_products(native_column_products(upload.ciphertexts, upload.vectors, P, self.public_key.nsquare)
                          if upload.vectors else [], upload.records)

    def add_products(self, products: Sequence[int], records: int) -> None:
        """Fold per-index products already computed elsewhere (an aggregation proxy, a Dask
        worker) into the running aggregate; the same record-count guard applies."""
        if records and len(products) != self.plaintexts:
            raise ConfigError(f"expected {self.plaintexts} aggregated ciphertexts, got {len(products)}")
        self.params.check_records(records, already=self.records, why=_OVERFLOW)
        n2 = self.public_key.nsquare
        for p, c in enumerate(products):
            self._acc[p] = self._acc[p] * c % n2
        self.records += records

    def add_timed(self, uploads: Iterable[Upload], phases: Phases | None = None) -> int:
        """Add every upload (``aggregate`` seconds to ``phases``; an iterator's own work, e.g.
        :meth:`Provider.per_record`'s encryption, is not counted here); returns the
        ciphertexts added."""
        ph = phases_or_new(phases)
        count = 0
        for upload in uploads:
            with ph("aggregate"):
                self.add(upload)
            count += len(upload.ciphertexts)
        return count

    def result(self) -> Aggregate:
        return Aggregate(self.public_key.fingerprint, [int(c) for c in self._acc], self.records)


def native_column_products(cts: Sequence[int], rows: int, cols: int, n2: int) -> list[int]:
    """Per-index products of a vector-major upload: one C call when the native core is
    there (about 2 us per ciphertext at n = 1024, GIL released), else gmpy2."""
    if native.native_available():
        return native.column_products(native.ints_to_words(cts, n2), rows, cols, n2)
    out = []
    for p in range(cols):
        acc = gmpy2.mpz(1)
        for c in cts[p::cols]:
            acc = acc * c % n2
        out.append(int(acc))
    return out


def aggregate(uploads: Iterable[Upload], params: RidgeParams, upload_pk: PublicKey) -> Aggregate:
    agg = Aggregator(params, upload_pk)
    for u in uploads:
        agg.add(u)
    return agg.result()


@dataclass(frozen=True)
class EncryptedSystem:
    """Enc_solve(A + lambda I) (d x d) and Enc_solve(b), the normal equations over all records."""

    key_fingerprint: bytes
    A: list[list[int]]
    b: list[int]


@dataclass(frozen=True)
class MaskedSystem:
    """What the CSP receives for the solve: Enc(A R) and Enc(b + A r)."""

    key_fingerprint: bytes
    AR: list[list[int]]
    c: list[int]


@dataclass(frozen=True)
class MaskSecret:
    """R and r, for whoever recovers the model (never for the CSP)."""

    R: list[list[int]]
    r: list[int]


class TradingPlatform:
    """The data-trading platform's computations (the party the command line calls ``ridge
    platform``; named in full because the project's *Platform* means devices and links): masks aggregates for unpacking, unmasks under the
    solve key, adds lambda I and masks the normal equations for the CSP's solve. A protocol
    party, not a Platform in the project's vocabulary (devices and links)."""

    def __init__(self, params: RidgeParams, upload_pk: PublicKey, solve_pk: PublicKey, *, workers: int = 1,
                 backend: str = "auto") -> None:
        self.params = params
        self.upload_pk = upload_pk
        self.solve_pk = solve_pk
        self.layout = upload_layout(params, upload_pk)
        check_solve_key(params, solve_pk)
        self.workers = check_int("workers", workers)
        self._backend = backend
        self._masks: list[list[int]] | None = None
        self.powm_backend = ""
        self.exponentiations = 0

    def aggregator(self) -> Aggregator:
        return Aggregator(self.params, self.upload_pk)

    def mask_for_unpack(self, agg: Aggregate) -> list[int]:
        """Enc(packed sums + packed (B + rho)) with fresh masks rho, kept for :meth:`unmask`."""
        return self.mask_contributions([agg])[0]

    def mask_contributions(self, aggs: Sequence[Aggregate]) -> list[list[int]]:
        """:meth:`mask_for_unpack` of each provider's aggregate, each with masks of its own
        (the CSP checks and sums them one by one, :meth:`Csp.unpack_contributions`)."""
        packed_masks: list[list[int]] = []
        out: list[list[int]] = []
        n2 = self.upload_pk.nsquare
        enc = ENCRYPTION.encryptor(self.upload_pk, self._backend)
        for agg in aggs:
            if agg.key_fingerprint != self.upload_pk.fingerprint:
                raise KeyMismatchError("aggregate is under another key than the upload key")
            masks = self.layout.random_masks(self.params.value_count)
            packed = self.layout.pack_mask(masks)
            if len(packed) != len(agg.ciphertexts):
                raise ConfigError(f"aggregate holds {len(agg.ciphertexts)} ciphertexts, expected {len(packed)}")
            out.append([c * e % n2 for c, e in zip(agg.ciphertexts, enc.encrypt_raw(packed))])
            packed_masks.append(masks)
        self._masks = packed_masks
        return out

    def unmask(self, slot_ciphertexts: Sequence[int], excluded: Sequence[int] = ()) -> EncryptedSystem:
        """Enc_solve(field_j) -> Enc_solve(field_j - sum_i (B + rho_ij)) = Enc_solve(T_j), the
        sum over the contributions the CSP kept (all but ``excluded``), arranged as the
        symmetric A (plus lambda at scale on the diagonal) and b."""
        if self._masks is None:
            raise ConfigError("unmask called before mask_for_unpack")
        p = self.params
        if len(slot_ciphertexts) != p.value_count:
            raise ConfigError(f"expected {p.value_count} slot ciphertexts, got {len(slot_ciphertexts)}")
        pk = self.solve_pk
        n, n2, bias = pk.n, pk.nsquare, self.layout.mask_bias
        kept = [masks for i, masks in enumerate(self._masks) if i not in set(excluded)]
        totals = [len(kept) * bias + sum(col) for col in zip(*kept)] if kept else [0] * p.value_count
        plain = [c * (1 + (-t % n) * n) % n2 for c, t in zip(slot_ciphertexts, totals)]
        self._masks = None  # one use: a second unmask with the same masks would be a bug
        d = p.d
        A = [[0] * d for _ in range(d)]
        rows, cols = p.a_index()
        for v, i, j in zip(plain[:p.a_values], rows.tolist(), cols.tolist()):
            A[i][j] = v
            if p.symmetric:
                A[j][i] = v
        lam_term = 1 + (p.lam_int % n) * n
        for i in range(d):
            A[i][i] = A[i][i] * lam_term % n2
        return EncryptedSystem(pk.fingerprint, A, plain[p.a_values:])

    def mask_system(self, system: EncryptedSystem) -> tuple[MaskedSystem, MaskSecret]:
        """Enc(A R), Enc(b + A r) with uniform invertible R and uniform r over Z_n
        (:meth:`apply_masks`)."""
        n, d = self.solve_pk.n, self.params.d
        while True:
            R = [[secrets.randbelow(n) for _ in range(d)] for _ in range(d)]
            if invertible_mod(R, n):
                break
        r = [secrets.randbelow(n) for _ in range(d)]
        return self.apply_masks(system, R, r), MaskSecret(R, r)

    def apply_masks(self, system: EncryptedSystem, R: Sequence[Sequence[int]], r: Sequence[int],
                    route: str | None = None) -> MaskedSystem:
        """Enc(A R)_ik = prod_j Enc(A_ij)^(R_jk) and Enc(b + A r)_i = Enc(b_i) prod_j
        Enc(A_ij)^(r_j): d (d + 1) products of d powers (d^3 + d^2 powers), constant time in R
        and r, over ``workers`` threads, by the route measured fastest on this CPU
        (:func:`~.powm.products_of_powers`; ``route`` forces one)."""
        pk = self.solve_pk
        if system.key_fingerprint != pk.fingerprint:
            raise KeyMismatchError("system is under another key than the solve key")
        d, n, n2 = self.params.d, pk.n, pk.nsquare
        exponents = [[R[j][k] for j in range(d)] for k in range(d)] + [list(r)]
        rows, self.powm_backend = products_of_powers(system.A, exponents, n2, n.bit_length(), self.workers, route)
        self.exponentiations = d ** 3 + d ** 2
        return MaskedSystem(pk.fingerprint, [row[:d] for row in rows],
                            [row[d] * b % n2 for row, b in zip(rows, system.b)])


class TooFewContributions(CryptoffloadError):
    """Fewer provider contributions than the minimum split within their slots."""

    def __init__(self, excluded: list[int], count: int, minimum: int) -> None:
        super().__init__(f"{len(excluded)} of {count} provider contributions overflowed their slots; fewer than "
                         f"{minimum} remain")
        self.excluded = excluded


class Csp:
    """Holds both private keys: decrypts and splits masked aggregates, solves masked systems."""

    def __init__(self, params: RidgeParams, upload_keys: tuple[PublicKey, PrivateKey],
                 solve_keys: tuple[PublicKey, PrivateKey], *, backend: str = "auto") -> None:
        self.params = params
        self.upload_pk, self._upload_sk = upload_keys
        self.solve_pk, self._solve_sk = solve_keys
        self.layout = upload_layout(params, self.upload_pk)
        check_solve_key(params, self.solve_pk)
        self._backend = backend

    def decrypt_split(self, masked: Sequence[int]) -> list[int]:
        """The CSP's whole view of the data: masked fields T_j + B + rho_j, one per value."""
        plain = self._upload_sk.raw_decrypt_many([self.upload_pk.check_ciphertext(c) for c in masked])
        return self.layout.unpack_masked(plain, self.params.value_count)

    def split_and_reencrypt(self, masked: Sequence[int]) -> list[int]:
        """Each masked field encrypted alone under the solve key."""
        return self.unpack_contributions([masked]).fields

    def unpack_contributions(self, masked: Sequence[Sequence[int]], minimum: int = 1) -> Unpacked:
        """Each provider's masked aggregate decrypted and split; one that does not split (a
        plaintext beyond the slots, a field reaching its check bits: that provider's sums left
        their range) is *excluded*, with the proof of it (:func:`~.proofs.exclusion_proof`:
        the plaintext that does not split, and its decryption proof), and the fields of the
        others are summed in the clear (a sum of masked sums, hidden as each one is) and
        encrypted under the solve key. Raises :class:`TooFewContributions` when fewer than
        ``minimum`` are kept. The CSP learns which contributions overflowed, nothing about the
        values of any."""
        total = [0] * self.params.value_count
        excluded, proofs = [], []
        for i, cts in enumerate(masked):
            checked = [self.upload_pk.check_ciphertext(c) for c in cts]
            plain = self._upload_sk.raw_decrypt_many(checked)
            try:
                fields = self.layout.unpack_masked(plain, self.params.value_count)
            except PackingError:
                excluded.append(i)
                proofs.append(exclusion_proof(self._upload_sk, self.layout, i, checked, plain))
                continue
            total = [a + b for a, b in zip(total, fields)]
        if len(masked) - len(excluded) < minimum:
            raise TooFewContributions(excluded, len(masked), minimum)
        return Unpacked(ENCRYPTION.encryptor(self.solve_pk, self._backend).encrypt_raw(total), excluded, proofs)

    def solve(self, masked: MaskedSystem) -> Solution:
        """w' = (A R)^-1 (b + A r) mod n, with the proof that it solves the system
        (:func:`~.proofs.solution_proof`). Refuses a singular matrix (SingularMatrixError)."""
        pk = self.solve_pk
        if masked.key_fingerprint != pk.fingerprint:
            raise KeyMismatchError("masked system is under another key than the solve key")
        d = self.params.d
        flat = [pk.check_ciphertext(v) for row in masked.AR for v in row] + [pk.check_ciphertext(v) for v in masked.c]
        plain = self._solve_sk.raw_decrypt_many(flat)
        M = [plain[i * d:(i + 1) * d] for i in range(d)]
        w_prime = solve_mod(M, plain[d * d:], pk.n)
        return Solution(w_prime, solution_proof(self._solve_sk, masked.AR, masked.c, w_prime))


@dataclass(frozen=True)
class RidgeModel:
    coef: np.ndarray
    fractions: list[Fraction]


def recover_model(w_prime: Sequence[int], secret: MaskSecret, params: RidgeParams, solve_pk: PublicKey,
                  records: int | None = None) -> RidgeModel:
    """w = R w' - r = A^-1 b mod n, each entry reconstructed as the exact fraction p/q within
    the bounds of :func:`solve_bounds` for ``records`` records (default ``max_records``):
    |p| <= N (Hadamard's bound on Cramer's numerators), 0 < q <= D (on det A). A residue
    with no such fraction -- a corrupted w', or data beyond the declared bounds -- raises
    :class:`ReconstructionError`; with the parameters' own D instead of the largest one n
    allows, a random residue passes with probability about 2 N D / n, not about 1/2."""
    n, d = solve_pk.n, params.d
    if len(w_prime) != d:
        raise ConfigError(f"expected {d} masked coefficients, got {len(w_prime)}")
    num, den = solve_bounds(params, records)
    fracs = []
    for i in range(d):
        wi = (sum(secret.R[i][k] * w_prime[k] for k in range(d)) - secret.r[i]) % n
        fracs.append(rational_reconstruct(wi, n, num, den))
    return RidgeModel(np.array([float(f) for f in fracs]), fracs)


@dataclass
class RidgeResult:
    coef: np.ndarray
    fractions: list[Fraction]
    timings: dict[str, float]
    records: int
    plaintexts_per_record: int
    ciphertexts_uploaded: int
    upload_bits: int
    solve_bits: int
    exponentiations: int
    powm_backend: str
    mode: str
    layout: dict[str, int] = field(default_factory=dict)


def finalize(params: RidgeParams, csp: Csp, evaluator: TradingPlatform, agg: Aggregate,
             timings: dict[str, float] | None = None) -> RidgeModel:
    """Steps 4 and 5 in one process: masked unpacking (the platform checks the CSP's
    exclusions), masked solve, the buyer's check of the CSP's solution
    (:class:`~.proofs.CspProofError` when it fails) and recovery. Adds ``unpack``,
    ``mask_solve``, ``csp_solve`` and ``recover`` (check + reconstruction) seconds to
    ``timings``."""
    phase = Phases(timings)
    with phase("unpack"):
        masked = evaluator.mask_contributions([agg])
        unpacked = csp.unpack_contributions(masked)
        check_exclusions(csp.upload_pk, evaluator.layout, masked, unpacked.excluded, unpacked.proofs)
        system = evaluator.unmask(unpacked.fields, unpacked.excluded)
    with phase("mask_solve"):
        masked_system, secret = evaluator.mask_system(system)
    with phase("csp_solve"):
        solution = csp.solve(masked_system)
    with phase("recover"):
        verify_solution(csp.solve_pk, masked_system.AR, masked_system.c, solution, evaluator.workers)
        return recover_model(solution.w_prime, secret, params, csp.solve_pk, agg.records)
