"""One session of the ridge protocol: its parameters and keys, and the parties wired from them.

Why one place: the protocol has four parties (providers, the platform, the CSP, the buyer) and
two ways to run them -- all in one process (the study, :func:`run_in_process`), or each as a
process over HTTP (``cryptoffload ridge csp|platform|provider``, which ``ridge demo`` starts).
Each used to wire its parties from parameters and keys by hand: the solve key's size rule was
written out four times, the study built its platform twice and its keys beside the CSP's. A
:class:`RidgeSession` is built once, from what the runner has, and the parties come from it:

* in one process: :meth:`RidgeSession.generate` (or :class:`RidgeKeys` given), then
  :meth:`~RidgeSession.provider`, :attr:`~RidgeSession.platform`, :attr:`~RidgeSession.csp`
  and :meth:`~RidgeSession.finalize` (steps 4 and 5);
* the CSP server: :meth:`RidgeSession.of_keys` with the key pairs it made or loaded;
* the platform and a provider: :meth:`RidgeSession.of_info` with the session they fetched
  (``GET /params``; public keys only -- a session without keys has no CSP);
* a Dask worker of the bulk path (:mod:`.bulk`): :meth:`RidgeSession.of_upload_key`, from the
  parameters and the upload public key its task carries (a provider's part only);
* before any key exists -- the CSP server before it binds its port, the demo before it starts
  a server: :meth:`RidgeKeys.check_sizes`, the sizes :meth:`RidgeKeys.generate` will make.

What a session is not: a place that checks. Each party checks what it needs when it is made
(a packing that fits the upload key, a solve key large enough for exact recovery) -- a party
running alone as a process is a boundary of its own -- and the session makes each party once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from cryptoffload.apps.ridge.messages import SessionInfo
from cryptoffload.apps.ridge.params import RidgeParams, solve_key_bits
from cryptoffload.apps.ridge.phases import Phases
from cryptoffload.apps.ridge.protocol import (Aggregate, Aggregator, Csp, Provider, RidgeModel, RidgeResult,
                                              TradingPlatform, check_upload_mode, finalize)
from cryptoffload.checks import check_int
from cryptoffload.crypto.paillier import KeyMismatchError, PrivateKey, PublicKey, check_key_bits, generate_keypair
from cryptoffload.errors import ConfigError

KeyPair = tuple[PublicKey, PrivateKey]


@dataclass(frozen=True)
class RidgeKeys:
    """The CSP's two key pairs: the upload key (providers encrypt under it) and the solve key
    (the masked system is solved under it)."""

    upload: KeyPair
    solve: KeyPair

    @classmethod
    def generate(cls, params: RidgeParams, *, upload_bits: int = 1024, solve_bits: int | None = None,
                 insecure_study_size: bool = False, upload: KeyPair | None = None) -> "RidgeKeys":
        """Fresh keys from the OS's randomness: the upload key of ``upload_bits`` (1024 needs
        ``insecure_study_size``; ``upload``: a pair the caller made instead) and the solve key
        of :func:`~.params.solve_key_bits` (``solve_bits``, or max(2048, what exact recovery
        needs))."""
        upload = upload or generate_keypair(upload_bits, insecure_study_size=insecure_study_size)
        solve = generate_keypair(solve_key_bits(params, solve_bits), insecure_study_size=insecure_study_size)
        return cls(upload, solve)

    @staticmethod
    def check_sizes(params: RidgeParams, upload_bits: int, solve_bits: int | None = None, *,
                    insecure_study_size: bool = False) -> tuple[int, int]:
        """The sizes :meth:`generate` makes -- the upload key's ``upload_bits`` and the solve
        key's :func:`~.params.solve_key_bits` -- checked before anything is made or started
        (a runner whose keys are made elsewhere, later, refuses a bad size at once). Returns
        both."""
        return (check_key_bits(upload_bits, insecure_study_size),
                check_key_bits(solve_key_bits(params, solve_bits), insecure_study_size))


class RidgeSession:
    """Parameters and both public keys -- what every party of one session knows -- and, for
    whoever plays the CSP, both key pairs; the parties are made from it, each once (see the
    module docstring). ``backend`` is the Paillier backend every party encrypts with,
    ``workers`` the platform's threads for the masked solve. ``solve_pk`` is None only for a
    provider's part alone (:meth:`of_upload_key`)."""

    def __init__(self, params: RidgeParams, upload_pk: PublicKey, solve_pk: PublicKey | None, *,
                 keys: RidgeKeys | None = None, backend: str = "auto", workers: int = 1) -> None:
        if keys is not None and (keys.upload[0] != upload_pk or keys.solve[0] != solve_pk):
            raise KeyMismatchError("the session's key pairs are not those of its public keys")
        self.params = params
        self.upload_pk = upload_pk
        self._solve_pk = solve_pk
        self.keys = keys
        self.backend = backend
        self.workers = check_int("workers", workers)

    @property
    def solve_pk(self) -> PublicKey:
        """The solve key (public); a session of the upload key only has none."""
        if self._solve_pk is None:
            raise ConfigError("this ridge session knows the upload key only (a provider's part): the platform's "
                              "and the CSP's parts need the solve key")
        return self._solve_pk

    @classmethod
    def of_keys(cls, params: RidgeParams, keys: RidgeKeys, *, backend: str = "auto", workers: int = 1) -> "RidgeSession":
        """The session of the CSP holding ``keys`` (or of a runner that plays every party)."""
        return cls(params, keys.upload[0], keys.solve[0], keys=keys, backend=backend, workers=workers)

    @classmethod
    def of_info(cls, info: SessionInfo, *, backend: str = "auto", workers: int = 1) -> "RidgeSession":
        """The session as a platform or a provider fetched it from the CSP: public keys only."""
        return cls(info.params, info.upload_pk, info.solve_pk, backend=backend, workers=workers)

    @classmethod
    def of_upload_key(cls, params: RidgeParams, upload_pk: PublicKey, *, backend: str = "auto") -> "RidgeSession":
        """The session as a provider's part alone knows it -- the parameters and the upload key,
        what a Dask worker of the bulk path is given (no solve key: it has no platform or CSP)."""
        return cls(params, upload_pk, None, backend=backend)

    @classmethod
    def generate(cls, params: RidgeParams, *, upload_bits: int = 1024, solve_bits: int | None = None,
                 insecure_study_size: bool = False, upload_keys: KeyPair | None = None, backend: str = "auto",
                 workers: int = 1) -> "RidgeSession":
        """A session with fresh keys (:meth:`RidgeKeys.generate`), every party in this process."""
        keys = RidgeKeys.generate(params, upload_bits=upload_bits, solve_bits=solve_bits,
                                  insecure_study_size=insecure_study_size, upload=upload_keys)
        return cls.of_keys(params, keys, backend=backend, workers=workers)

    # -- the parties ------------------------------------------------------------------------
    def provider(self, *, upload_pk: PublicKey | None = None, constant_time: bool = True) -> Provider:
        """A new provider (there are many); ``upload_pk``: the provider's own copy of the upload
        key (a provider draws its own DJN base h_s; the modulus must be the session's)."""
        pk = self.upload_pk if upload_pk is None else upload_pk
        if pk != self.upload_pk:
            raise KeyMismatchError("a provider's upload key must have the session's modulus")
        return Provider(self.params, pk, backend=self.backend, constant_time=constant_time)

    @cached_property
    def platform(self) -> TradingPlatform:
        """The platform's computations, made on first use."""
        return TradingPlatform(self.params, self.upload_pk, self.solve_pk, workers=self.workers, backend=self.backend)

    @cached_property
    def csp(self) -> Csp:
        """The CSP's computations, made on first use; only a session holding the keys has one."""
        if self.keys is None:
            raise ConfigError("this ridge session holds the public keys only: the CSP's part needs the key pairs")
        return Csp(self.params, self.keys.upload, self.keys.solve, backend=self.backend)

    def aggregator(self) -> Aggregator:
        """A new running aggregate under the upload key."""
        return self.platform.aggregator()

    def finalize(self, agg: Aggregate, timings: dict[str, float] | None = None) -> RidgeModel:
        """Steps 4 and 5 with this session's platform and CSP (:func:`~.protocol.finalize`)."""
        return finalize(self.params, self.csp, self.platform, agg, timings)


def run_in_process(X: np.ndarray, y: np.ndarray, params: RidgeParams, *, mode: str = "per-record",
                   providers: int = 1, upload_keys: KeyPair | None = None, solve_keys: KeyPair | None = None,
                   upload_bits: int = 1024, insecure_study_size: bool = False, backend: str = "auto",
                   workers: int = 1, chunk: int = 4096) -> RidgeResult:
    """All parties in this process: keys (unless given), providers (records split into
    ``providers`` contiguous parts), aggregation, masked unpacking, masked solve, recovery.

    Timings (seconds, wall clock): ``keygen``, ``encode`` (encode + pack), ``encrypt``,
    ``aggregate``, ``unpack`` (platform masks; CSP decrypts, splits, re-encrypts; platform
    unmasks), ``mask_solve`` (platform's d^3 + d^2 powers, as d (d + 1) multi-exponentiations),
    ``csp_solve`` and ``recover``; ``total`` is their sum."""
    check_upload_mode(mode)
    check_int("providers", providers)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).ravel()
    params.check_records(len(X))
    t: dict[str, float] = {k: 0.0 for k in ("keygen", "encode", "encrypt", "aggregate", "unpack", "mask_solve",
                                            "csp_solve", "recover")}
    phases = Phases(t)
    with phases("keygen"):
        upload = upload_keys or generate_keypair(upload_bits, insecure_study_size=insecure_study_size)
        keys = (RidgeKeys(upload, solve_keys) if solve_keys is not None else
                RidgeKeys.generate(params, insecure_study_size=insecure_study_size, upload=upload))
    session = RidgeSession.of_keys(params, keys, backend=backend, workers=workers)
    agg = session.aggregator()
    uploaded = 0
    for Xp, yp in zip(np.array_split(X, providers), np.array_split(y, providers)):
        prov = session.provider()
        uploads = (prov.per_record(Xp, yp, chunk, phases) if mode == "per-record"
                   else [prov.per_provider(Xp, yp, chunk, phases)])
        uploaded += agg.add_timed(uploads, phases)
    with phases("aggregate"):
        aggregate_ = agg.result()
    model = session.finalize(aggregate_, t)
    t["total"] = sum(t.values())
    platform, layout = session.platform, session.platform.layout
    return RidgeResult(
        coef=model.coef, fractions=model.fractions, timings=t, records=len(X),
        plaintexts_per_record=layout.plaintexts_needed(params.value_count), ciphertexts_uploaded=uploaded,
        upload_bits=session.upload_pk.bits, solve_bits=session.solve_pk.bits, exponentiations=platform.exponentiations,
        powm_backend=platform.powm_backend, mode=mode,
        layout={"value_bits": layout.value_bits, "guard_bits": layout.guard_bits, "mask_bits": layout.mask_bits,
                "slot_bits": layout.slot_bits, "slots": layout.slots, "values": params.value_count})
