"""One batch of jobs computed where the work runs: grouped by job kind and key so one native
call covers each group, a failing job isolated (the rest of its batch succeeds).

Why a module of its own: the CPU engine (threads, or its worker processes), the IFMA engine
and the GPU engine all run this one function, each with its own ``powm`` (GMP, AVX512-IFMA,
a CUDA kernel); only where it runs differs. Batches are lists of (kind, payload) integer
tuples, never key objects; a key's ``Encryptor`` (fixed-base table) comes from the encryption
service (:data:`~cryptoffload.crypto.paillier.service.ENCRYPTION`, the process's one bounded
table cache), asked with the key's (n, h_s) for each group.

What is not checked here: the operands. A batch holds the payloads of :class:`~.base.Job`
objects, checked when each job was made (plaintexts in [0, n), exponents non-negative, every
operand an int); checking them again here would be the second check of the same value.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Protocol, Sequence

from cryptoffload.crypto import native
from cryptoffload.crypto.paillier import djn
from cryptoffload.crypto.paillier.public_key import PublicKey
from cryptoffload.crypto.paillier.service import ENCRYPTION, EncryptionService
from cryptoffload.engines.base import JobFailed, Outcome
from cryptoffload.errors import ConfigError

if TYPE_CHECKING:
    from cryptoffload.crypto.paillier.encryptor import Encryptor

#: ``powm(bases, exps, modulus, exp_bits)``: ``exp_bits`` is a public bound on the exponents'
#: bit length where the caller knows one (the exponents may be secret), else None. Kernels that
#: process a fixed number of exponent bits (the GPU's) use it instead of the longest exponent;
#: GMP ignores it (``mpz_powm``'s time depends on the exponent anyway).
PowmFn = Callable[[Sequence[int], Sequence[int], int, "int | None"], list[int]]
Work = tuple[str, tuple[int | None, ...]]
#: what one native call is made for: (modulus,) for ``modexp``, (n, h_s) for
#: ``paillier.encrypt``, (n,) for ``paillier.encrypt_classic``
GroupKey = tuple[int, ...]


class BatchEncryptor(Protocol):
    """What a batch encrypts through: the CPU ``Encryptor`` or a GPU key bound to a stream."""

    @property
    def public_key(self) -> PublicKey: ...

    def encrypt_raw(self, messages: Sequence[int], exponents: Sequence[int] | None = None) -> list[int]: ...


class EncryptorSource(Protocol):
    """Where a batch finds the encryptor of a public key (n, h_s): :class:`ServiceEncryptors`,
    or the GPU engine's per-stream keys."""

    def get(self, n: int, hs: int) -> BatchEncryptor: ...


def gmp_powm(bases: Sequence[int], exps: Sequence[int], modulus: int, exp_bits: int | None = None) -> list[int]:
    """The native GMP core's batch modexp (a :data:`PowmFn`; ``exp_bits`` is not needed)."""
    return native.powm_batch(bases, exps, modulus)


@dataclass(frozen=True)
class ServiceEncryptors:
    """The CPU and IFMA engines' :class:`EncryptorSource`: the encryption service asked with
    this engine's backend and lookup mode. Not a cache of its own: the service keeps the tables
    (per process -- a worker process has its own), within its memory cap, so an engine holds no
    second, unbounded copy of them."""

    backend: str = "gmp"
    constant_time: bool = True
    service: EncryptionService = ENCRYPTION

    def get(self, n: int, hs: int) -> "Encryptor":
        return self.service.encryptor(PublicKey(n, hs), self.backend, constant_time=self.constant_time)


def _operand(x: int | None) -> int:
    """A payload integer the job cannot do without (``None`` is only for randomness the
    engine draws); a ``TypeError`` -- a malformed payload -- otherwise."""
    if x is None:
        raise TypeError("a required payload integer is None")
    return x


def _modexp(key: GroupKey, payloads: list[tuple[int | None, ...]], powm: PowmFn) -> list[int]:
    (modulus,) = key
    return powm([_operand(p[0]) for p in payloads], [_operand(p[1]) for p in payloads], modulus, None)


def _encrypt(key: GroupKey, payloads: list[tuple[int | None, ...]], encryptors: EncryptorSource) -> list[int]:
    n, hs = key
    enc = encryptors.get(n, hs)
    ms = [_operand(p[2]) for p in payloads]
    exps = [a if (a := p[3]) is not None else enc.public_key.random_exponent() for p in payloads]
    return enc.encrypt_raw(ms, exps)


def _encrypt_classic(key: GroupKey, payloads: list[tuple[int | None, ...]], powm: PowmFn) -> list[int]:
    (n,) = key
    n2 = n * n
    ms = [_operand(p[1]) for p in payloads]
    rs = [r if (r := p[2]) is not None else djn.random_unit(n) for p in payloads]
    bound = n.bit_length()   # m < n is secret: every exponent is processed over n's length
    gm = powm([n + 1] * len(ms), ms, n2, bound)
    rn = powm(rs, [n] * len(rs), n2, bound)
    return [a * b % n2 for a, b in zip(gm, rn)]


def _run_group(kind: str, key: GroupKey, payloads: list[tuple[int | None, ...]], powm: PowmFn,
               encryptors: EncryptorSource) -> list[int]:
    if kind == "modexp":
        return _modexp(key, payloads, powm)
    if kind == "paillier.encrypt":
        return _encrypt(key, payloads, encryptors)
    if kind == "paillier.encrypt_classic":
        return _encrypt_classic(key, payloads, powm)
    raise ConfigError(f"unknown job kind {kind!r}")


def _group_key(kind: str, payload: tuple[int | None, ...]) -> GroupKey:
    if kind == "modexp":
        return (_operand(payload[2]),)
    if kind == "paillier.encrypt":
        return (_operand(payload[0]), _operand(payload[1]))
    return (_operand(payload[0]),)


def _failure(kind: str, exc: BaseException) -> JobFailed:
    return JobFailed(f"{kind} job failed: {type(exc).__name__}: {exc}")


def compute_batch(batch: Sequence[Work], powm: PowmFn = gmp_powm,
                  encryptors: EncryptorSource | None = None) -> list[Outcome]:
    """(ok, value) per job: one native call per (kind, key) group; a group that raises is
    retried job by job so only the bad job fails."""
    encryptors = encryptors or ServiceEncryptors()
    groups: dict[tuple[str, GroupKey], list[int]] = defaultdict(list)
    out: list[Outcome] = [(False, None)] * len(batch)
    for i, (kind, payload) in enumerate(batch):
        try:
            groups[(kind, _group_key(kind, payload))].append(i)
        except (IndexError, TypeError):
            out[i] = (False, _failure(kind, ConfigError("malformed payload")))
    for (kind, key), idx in groups.items():
        try:
            values = _run_group(kind, key, [batch[i][1] for i in idx], powm, encryptors)
            for i, v in zip(idx, values):
                out[i] = (True, v)
        except Exception:  # noqa: BLE001 - isolate the bad job(s)
            for i in idx:
                try:
                    out[i] = (True, _run_group(kind, key, [batch[i][1]], powm, encryptors)[0])
                except Exception as exc:  # noqa: BLE001
                    out[i] = (False, _failure(kind, exc))
    return out
