"""TLS offload to a SmartNIC (BlueField-2) for a management node serving files, after seed 004.

Seed 004 serves files from nginx in four modes -- ``plain`` HTTP, ``tls`` (OpenSSL in user
space), ``ktls`` (the kernel encrypts the records; nginx can use ``SSL_sendfile``) and
``ktls-nic`` (kTLS with the BlueField-2 NIC encrypting) -- and times single wget fetches only.
It leaves the CPU saved and the capacity gained as future work. That is what this module
estimates, in three layers:

* **Cost model** (:class:`TlsCostModel`). This machine cannot run ``ktls`` or ``ktls-nic`` (no
  ``CONFIG_TLS``, no NIC with TLS offload), so they are MODELLED from this machine's MEASURED
  CPU seconds per request for ``plain`` and ``tls`` (:class:`MeasuredCosts`) and the published
  figures of ``profiles/tls_offload.toml``. For a file of ``s`` bytes, with ``P(s)`` and
  ``T(s)`` the measured plain and user-space TLS costs and ``H`` the measured handshake cost
  (0 when not given), the record-layer cost is ``D(s) = T(s) - P(s) - H`` and::

      ktls(s)     = P(s) + H + f_k * D(s)                       + a * h_k
      ktls-nic(s) = P(s) + H + f_k * D(s) * (f_n + resync(s))   + a * (h_k + h_n)

  ``f_k`` is the share of the record-layer cost that software kTLS keeps (the copies into and
  out of user space go, the encryption stays), ``f_n`` the share of *that* which remains when
  the NIC encrypts (record framing and driver work stay). ``resync(s)`` is the software
  fallback after TCP retransmissions: a retransmitted segment in the middle of a TLS record
  cannot be encrypted by a NIC that keeps per-record state, so the record prefix up to it is
  re-processed (FreeBSD review D30908: up to a whole 16 KB record for one 1448-byte segment);
  the model charges it as software re-encryption at kTLS's per-byte cost, an upper bound (mlx5
  re-sends the prefix by DMA instead)::

      resync(s) = rho * ceil(s/MSS) * (min(s, R) + min(s, MSS)) / 2 / s

  ``h_k`` and ``h_n`` are the per-connection hand-off costs (``setsockopt(TLS_TX/TLS_RX)``
  after the handshake; for the NIC also the driver creating the NIC's crypto context). No
  absolute figure for them was found, so they are calibrated so that a single fetch of seed
  004's small file (2 KB, where transfer time is negligible) is ``+6.2 %`` slower with ktls than
  with tls and ``+13 %`` slower with ktls-nic than with ktls, as seed 004 measured. ``a`` is the
  share of the hand-off that holds the worker (an assumption, 1 by default); the rest is added
  to latency as waiting. One request per connection, like seed 004's wget fetches.

  Provenance: costs of ``plain`` and ``tls`` pass through the provenance of the measured input
  (``"measured"``); every ``ktls`` and ``ktls-nic`` number is ``"modelled"``.

* **Capacity** (:meth:`TlsCostModel.capacity`): requests/s per core ``= 1 / mean CPU seconds
  per request`` of the file mix; for ``C`` cores ``min(C / cpu, wire rate / wire bytes,
  record rate / records)`` -- the NIC's line rate caps large files whatever the CPU saves.
  Wire rate: the 25 GbE line rate times ``MSS / (MSS + 90)`` (Ethernet, IPv4, TCP headers);
  TLS modes add 22 bytes per 16 KB record. A per-NIC record-processing limit is applied only
  when a profile gives ``nic.max_records_per_s`` (none was found to cite for the BlueField-2).

* **Simulation** (:class:`ManagementNodeModel`, SimPy on the project's sim core): ``C`` cores
  (a FIFO :class:`~cryptoffload.sim.devices.Device`, one nginx worker per core) serve an
  open-loop Poisson stream of requests drawn from a file-size mix; each request holds a core
  for its modelled CPU time, waits any non-CPU hand-off time, then sends its wire bytes through
  the NIC (:class:`SmartNicDevice`: a processor-sharing :class:`~cryptoffload.sim.links.Link`
  at the wire rate). CPU work and transmission are sequential, which over-states the latency of
  one large file a little (a real server overlaps them) and changes no capacity. The planner
  :func:`clients_per_core` bisects on the client count for the highest one whose simulated p99
  stays under a latency target, below 95 % of the closed-form capacity (a finite run near
  saturation under-states the tail); every run of one search uses the same random draws
  (common random numbers), so the simulated p99 is monotone in the client count and bisection
  is exact for the sample.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Iterable, Mapping, Union

import numpy as np

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.profiles.loader import Profile, load_profile
from cryptoffload.sim.core import (
    LatencyStats,
    ProcessGenerator,
    Simulation,
    check_count,
    check_non_negative,
    check_positive,
)
from cryptoffload.sim.devices import Device
from cryptoffload.sim.links import Link

MODES: tuple[str, ...] = ("plain", "tls", "ktls", "ktls-nic")
"""Seed 004's modes (1)-(4), named as in :mod:`cryptoffload.apps.tls`."""

MEASURED_MODES: tuple[str, ...] = ("plain", "tls")
MODELLED_MODES: tuple[str, ...] = ("ktls", "ktls-nic")
TLS_MODES: tuple[str, ...] = ("tls", "ktls", "ktls-nic")
VARIANTS: tuple[str, ...] = ("nominal", "optimistic", "pessimistic")
"""Which end of each profile range to use: nominal, best case for offload, worst case."""

PROFILE_NAME = "tls_offload"
MODELLED = "modelled"

# profile field used for each parameter, per variant (nominal, optimistic, pessimistic)
_RANGED: dict[str, tuple[str, str, str]] = {
    "ktls_fraction": ("ktls.cpu_fraction", "ktls.cpu_fraction_min", "ktls.cpu_fraction_max"),
    "nic_fraction": ("nic.cpu_fraction_of_ktls", "nic.cpu_fraction_of_ktls_min",
                     "nic.cpu_fraction_of_ktls_max"),
    "retransmit_rate": ("nic.retransmit_rate", "nic.retransmit_rate_min",
                        "nic.retransmit_rate_max"),
    "handoff_cpu_share": ("handoff.cpu_share", "handoff.cpu_share_min", "handoff.cpu_share_max"),
}
_FIXED: dict[str, str] = {
    "line_rate_bps": "nic.line_rate_bps",
    "small_file_bytes": "seed004.small_file_bytes",
    "small_ktls_over_tls": "seed004.small_ktls_over_tls",
    "small_nic_over_ktls": "seed004.small_nic_over_ktls",
    "large_file_bytes": "seed004.large_file_bytes",
    "record_bytes": "tls.max_record_bytes",
    "record_overhead_bytes": "tls.record_overhead_bytes",
    "mss_bytes": "tcp.mss_bytes",
    "segment_overhead_bytes": "tcp.per_segment_overhead_bytes",
}
REQUIRED_PROFILE_FIELDS: tuple[str, ...] = tuple(
    [f for triple in _RANGED.values() for f in triple] + list(_FIXED.values())
)
OPTIONAL_PROFILE_FIELDS: dict[str, str] = {"max_records_per_s": "nic.max_records_per_s"}

_FRACTIONS = ("ktls_fraction", "nic_fraction", "retransmit_rate", "handoff_cpu_share")


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ConfigError(f"unknown TLS mode {mode!r}; choose one of {', '.join(MODES)}")
    return mode


def _check_size(name: str, size: Any) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ConfigError(f"{name} must be a positive integer number of bytes, got {size!r}")
    return int(size)


# -- measured inputs --------------------------------------------------------------------------
@dataclass(frozen=True)
class MeasuredCosts:
    """CPU seconds per request measured on THIS machine for ``plain`` and ``tls``.

    ``plain_s`` and ``tls_s`` map file size (bytes) to CPU seconds per request (one request
    per connection, handshake included, as with seed 004's wget); both must cover the same
    sizes. ``handshake_s``, when known, is the part of the tls cost spent in the handshake,
    which stays in user space in every TLS mode. ``provenance`` travels to the outputs of the
    modes measured (``plain``, ``tls``); give ``"illustrative"`` for made-up inputs.
    """

    plain_s: Mapping[int, float]
    tls_s: Mapping[int, float]
    handshake_s: float | None = None
    provenance: str = "measured"
    note: str = ""

    def __post_init__(self) -> None:
        plain = self._table("plain_s", self.plain_s)
        tls = self._table("tls_s", self.tls_s)
        if set(plain) != set(tls):
            raise ConfigError(
                "plain_s and tls_s must cover the same file sizes, got "
                f"{sorted(plain)} and {sorted(tls)}"
            )
        for s in plain:
            if tls[s] < plain[s]:
                raise ConfigError(
                    f"measured tls cost ({tls[s]!r} s) is below plain ({plain[s]!r} s) for "
                    f"{s}-byte files: the TLS increment cannot be negative"
                )
        hs = None
        if self.handshake_s is not None:
            hs = check_non_negative("handshake_s", self.handshake_s)
            worst = min(tls[s] - plain[s] for s in plain)
            if hs > worst * (1 + 1e-12):
                raise ConfigError(
                    f"handshake_s ({hs!r} s) exceeds the measured tls - plain increment "
                    f"({worst!r} s) at some file size; the handshake is part of that increment"
                )
        if not isinstance(self.provenance, str) or not self.provenance.strip():
            raise ConfigError(f"provenance must be a non-empty string, got {self.provenance!r}")
        if self.provenance == MODELLED:
            raise ConfigError("measured costs cannot carry provenance 'modelled'")
        object.__setattr__(self, "plain_s", dict(sorted(plain.items())))
        object.__setattr__(self, "tls_s", dict(sorted(tls.items())))
        object.__setattr__(self, "handshake_s", hs)

    @staticmethod
    def _table(name: str, table: Mapping[int, float]) -> dict[int, float]:
        if not isinstance(table, Mapping) or not table:
            raise ConfigError(f"{name} must be a non-empty mapping of file size -> seconds")
        return {
            _check_size(f"{name} file size", k): check_positive(f"{name}[{k}]", v)
            for k, v in table.items()
        }

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(self.plain_s)

    def plain(self, size: int) -> float:
        return _interpolate("plain_s", self.plain_s, size)

    def tls(self, size: int) -> float:
        return _interpolate("tls_s", self.tls_s, size)


def _interpolate(name: str, table: Mapping[int, float], size: int) -> float:
    """Exact value, or linear between the two nearest measured sizes; never extrapolated."""
    size = _check_size("file size", size)
    if size in table:
        return table[size]
    xs = list(table)
    if size < xs[0] or size > xs[-1]:
        raise ConfigError(
            f"{size}-byte files are outside the measured sizes {xs[0]}..{xs[-1]} of {name}; "
            "measure that size (costs are interpolated, never extrapolated)"
        )
    return float(np.interp(size, xs, [table[x] for x in xs]))


# -- profile parameters -----------------------------------------------------------------------
@dataclass(frozen=True)
class TlsOffloadParams:
    """The profile's numbers for one variant, with the source of each."""

    ktls_fraction: float
    nic_fraction: float
    retransmit_rate: float
    handoff_cpu_share: float
    line_rate_bps: float
    small_file_bytes: int
    small_ktls_over_tls: float
    small_nic_over_ktls: float
    large_file_bytes: int
    record_bytes: int
    record_overhead_bytes: float
    mss_bytes: int
    segment_overhead_bytes: float
    max_records_per_s: float | None = None
    variant: str = "nominal"
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for name in _FRACTIONS:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0.0 <= v <= 1.0):
                raise ConfigError(f"{name} must be a number in [0, 1], got {v!r}")
        for name in ("line_rate_bps", "small_ktls_over_tls", "small_nic_over_ktls"):
            check_positive(name, getattr(self, name))
        for name in ("record_overhead_bytes", "segment_overhead_bytes"):
            check_non_negative(name, getattr(self, name))
        for name in ("small_file_bytes", "large_file_bytes", "record_bytes", "mss_bytes"):
            object.__setattr__(self, name, _check_size(name, getattr(self, name)))
        if self.max_records_per_s is not None:
            check_positive("max_records_per_s", self.max_records_per_s)
        if self.variant not in VARIANTS:
            raise ConfigError(
                f"unknown variant {self.variant!r}; choose one of {', '.join(VARIANTS)}")

    @classmethod
    def from_profile(
        cls, profile: Profile | str | os.PathLike[str] | None = None, variant: str = "nominal"
    ) -> TlsOffloadParams:
        if variant not in VARIANTS:
            raise ConfigError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
        if profile is None:
            profile = PROFILE_NAME
        if not isinstance(profile, Profile):
            profile = load_profile(profile, required=REQUIRED_PROFILE_FIELDS)
        for dotted in REQUIRED_PROFILE_FIELDS:  # a Profile given as an object is checked too
            profile.value(dotted)
        idx = VARIANTS.index(variant)
        kw: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for name, triple in _RANGED.items():
            dotted = triple[idx]
            kw[name] = profile.value(dotted)  # ProfileError naming the field when missing
            sources[name] = f"{dotted}: {profile.source(dotted)}"
        for name, dotted in _FIXED.items():
            kw[name] = profile.value(dotted)
            sources[name] = f"{dotted}: {profile.source(dotted)}"
        for name, dotted in OPTIONAL_PROFILE_FIELDS.items():
            if profile.get(dotted) is not None:
                kw[name] = profile.value(dotted)
                sources[name] = f"{dotted}: {profile.source(dotted)}"
        for name in ("small_file_bytes", "large_file_bytes", "record_bytes", "mss_bytes"):
            v = kw[name]
            if v != int(v):
                raise ProfileError(f"{profile.path}: field '{_FIXED[name]}' must be a whole "
                                   f"number of bytes, got {v!r}")
            kw[name] = int(v)
        try:
            return cls(variant=variant, sources=sources, **kw)
        except ConfigError as exc:
            raise ProfileError(f"{profile.path}: {exc}") from None


# -- the cost model ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ModeCost:
    """What one request of ``size`` bytes costs in ``mode``."""

    mode: str
    size: int
    cpu_s: float
    delay_s: float
    wire_bytes: float
    provenance: str
    breakdown: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CapacityEstimate:
    """Closed-form capacity of ``cores`` cores and one NIC port for a file mix."""

    mode: str
    cores: int
    requests_per_s: float
    per_core_requests_per_s: float
    cpu_bound_rps: float
    nic_bound_rps: float
    record_bound_rps: float | None
    bound: str
    mean_cpu_s: float
    mean_wire_bytes: float
    provenance: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


FileMix = Union[int, Mapping[int, float]]


def normalise_mix(file_mix: FileMix) -> tuple[tuple[int, float], ...]:
    """``{size: weight}`` (or one size) -> ``((size, probability), ...)`` sorted by size."""
    if isinstance(file_mix, (int, np.integer)) and not isinstance(file_mix, bool):
        return ((_check_size("file size", file_mix), 1.0),)
    if not isinstance(file_mix, Mapping) or not file_mix:
        raise ConfigError("file_mix must be a file size or a non-empty {size: weight} mapping, "
                          f"got {file_mix!r}")
    items = {_check_size("file size", k): check_positive(f"weight of {k}-byte files", w)
             for k, w in file_mix.items()}
    total = sum(items.values())
    return tuple((s, w / total) for s, w in sorted(items.items()))


@dataclass(frozen=True)
class TlsCostModel:
    """CPU seconds, non-CPU delay and wire bytes per request in each mode (see module doc)."""

    measured: MeasuredCosts
    params: TlsOffloadParams
    handoff_ktls_s: float = field(init=False)
    """Calibrated kTLS hand-off per connection (seconds, CPU + waiting)."""
    handoff_nic_s: float = field(init=False)
    """Calibrated extra NIC hand-off per connection (seconds, CPU + waiting)."""

    def __post_init__(self) -> None:
        if not isinstance(self.measured, MeasuredCosts):
            raise ConfigError("measured must be a MeasuredCosts")
        if not isinstance(self.params, TlsOffloadParams):
            raise ConfigError("params must be a TlsOffloadParams")
        s0 = self.params.small_file_bytes
        try:
            t0 = self.measured.tls(s0)
        except ConfigError:
            raise ConfigError(
                f"the measured sizes {list(self.measured.sizes)} must include (or bracket) "
                f"{s0} bytes: the kTLS hand-off costs are calibrated on seed 004's "
                f"{s0}-byte fetch"
            ) from None
        base_k = self._base("ktls", s0)
        hk = max(0.0, self.params.small_ktls_over_tls * t0 - base_k)
        base_n = self._base("ktls-nic", s0)
        hn = max(0.0, self.params.small_nic_over_ktls * (base_k + hk) - base_n - hk)
        object.__setattr__(self, "handoff_ktls_s", hk)
        object.__setattr__(self, "handoff_nic_s", hn)

    @classmethod
    def from_profile(
        cls,
        profile: Profile | str | os.PathLike[str] | None,
        measured: MeasuredCosts | Mapping[str, Any],
        variant: str = "nominal",
        **overrides: Any,
    ) -> TlsCostModel:
        """Build from a profile (``None``: the built-in ``tls_offload``) and measured costs.

        ``measured`` is a :class:`MeasuredCosts` or a mapping of its fields; ``overrides``
        replace single parameters (e.g. ``ktls_fraction=1.0``) for sensitivity studies.
        """
        params = TlsOffloadParams.from_profile(profile, variant)
        if overrides:
            unknown = set(overrides) - {f for f in TlsOffloadParams.__dataclass_fields__}
            if unknown:
                raise ConfigError(f"unknown parameter(s) {sorted(unknown)}")
            srcs = dict(params.sources)
            for k in overrides:
                srcs[k] = "override (caller)"
            params = replace(params, sources=srcs, **overrides)
        if isinstance(measured, Mapping):
            measured = MeasuredCosts(**measured)
        return cls(measured, params)

    # -- per request ------------------------------------------------------------------------
    def record_layer_s(self, size: int) -> float:
        """Measured user-space TLS cost beyond plain HTTP and the handshake."""
        return max(0.0, self.measured.tls(size) - self.measured.plain(size)
                   - (self.measured.handshake_s or 0.0))

    def resync_factor(self, size: int) -> float:
        """Extra kTLS-equivalent work per byte from retransmission resyncs (module doc)."""
        p = self.params
        segments = math.ceil(size / p.mss_bytes)
        rebytes = (min(size, p.record_bytes) + min(size, p.mss_bytes)) / 2.0
        return p.retransmit_rate * segments * rebytes / size

    def _base(self, mode: str, size: int) -> float:
        m, p = self.measured, self.params
        fixed = m.plain(size) + (m.handshake_s or 0.0)
        d = self.record_layer_s(size)
        if mode == "ktls":
            return fixed + p.ktls_fraction * d
        return fixed + p.ktls_fraction * d * (p.nic_fraction + self.resync_factor(size))

    def records(self, size: int) -> int:
        return math.ceil(size / self.params.record_bytes)

    def wire_bytes(self, mode: str, size: int) -> float:
        """Payload bytes the NIC sends: the file, plus record headers and tags in TLS modes."""
        check_mode(mode)
        size = _check_size("file size", size)
        if mode == "plain":
            return float(size)
        return float(size + self.records(size) * self.params.record_overhead_bytes)

    @property
    def wire_rate_Bps(self) -> float:
        """TCP payload bytes per second at line rate (Ethernet/IP/TCP headers removed)."""
        p = self.params
        return p.line_rate_bps / 8.0 * p.mss_bytes / (p.mss_bytes + p.segment_overhead_bytes)

    def provenance(self, mode: str) -> str:
        return self.measured.provenance if check_mode(mode) in MEASURED_MODES else MODELLED

    def cost(self, mode: str, size: int) -> ModeCost:
        check_mode(mode)
        size = _check_size("file size", size)
        m, p = self.measured, self.params
        plain = m.plain(size)
        if mode == "plain":
            return ModeCost(mode, size, plain, 0.0, self.wire_bytes(mode, size),
                            self.provenance(mode), {"plain_s": plain})
        if mode == "tls":
            tls = m.tls(size)
            return ModeCost(mode, size, tls, 0.0, self.wire_bytes(mode, size),
                            self.provenance(mode),
                            {"plain_s": plain, "handshake_s": m.handshake_s or 0.0,
                             "record_layer_s": self.record_layer_s(size)})
        d = self.record_layer_s(size)
        if mode == "ktls":
            kept = p.ktls_fraction * d
            resync = 0.0
            handoff = self.handoff_ktls_s
        else:
            kept = p.ktls_fraction * d * p.nic_fraction
            resync = p.ktls_fraction * d * self.resync_factor(size)
            handoff = self.handoff_ktls_s + self.handoff_nic_s
        cpu_handoff = p.handoff_cpu_share * handoff
        delay = handoff - cpu_handoff
        cpu = plain + (m.handshake_s or 0.0) + kept + resync + cpu_handoff
        return ModeCost(mode, size, cpu, delay, self.wire_bytes(mode, size), MODELLED,
                        {"plain_s": plain, "handshake_s": m.handshake_s or 0.0,
                         "record_layer_s": kept, "resync_s": resync,
                         "handoff_cpu_s": cpu_handoff, "handoff_wait_s": delay})

    def cpu_s(self, mode: str, size: int) -> float:
        return self.cost(mode, size).cpu_s

    def single_fetch_s(self, mode: str, size: int) -> float:
        """Server-side time of one fetch on an idle node: CPU, waiting, then transmission."""
        c = self.cost(mode, size)
        return c.cpu_s + c.delay_s + c.wire_bytes / self.wire_rate_Bps

    def predict(self, sizes: Iterable[int] | None = None) -> dict[str, dict[int, ModeCost]]:
        """:class:`ModeCost` for every mode at every size (default: the measured sizes)."""
        sz = list(self.measured.sizes if sizes is None else sizes)
        return {mode: {s: self.cost(mode, s) for s in sz} for mode in MODES}

    def seed_ratio_check(self) -> dict[str, dict[str, float]]:
        """Modelled single-fetch ratios beside seed 004's, at the seed's sizes we can price.

        The small-file ktls/tls and ktls-nic/ktls ratios match by construction (calibration);
        the others are predictions. Seed 004's are wget times (client and network included),
        ours server-side, so only the direction of each ratio is comparable.
        """
        out: dict[str, dict[str, float]] = {}
        lo, hi = self.measured.sizes[0], self.measured.sizes[-1]
        for label, size in (("small", self.params.small_file_bytes),
                            ("large", self.params.large_file_bytes)):
            if not lo <= size <= hi:
                continue
            f = {m: self.single_fetch_s(m, size) for m in MODES}
            out[label] = {"size": float(size), "tls_over_plain": f["tls"] / f["plain"],
                          "ktls_over_tls": f["ktls"] / f["tls"],
                          "nic_over_ktls": f["ktls-nic"] / f["ktls"]}
        return out

    # -- capacity ---------------------------------------------------------------------------
    def capacity(self, mode: str, file_mix: FileMix, cores: int = 1) -> CapacityEstimate:
        check_mode(mode)
        cores = check_count("cores", cores)
        mix = normalise_mix(file_mix)
        mean_cpu = sum(w * self.cpu_s(mode, s) for s, w in mix)
        mean_wire = sum(w * self.wire_bytes(mode, s) for s, w in mix)
        per_core = 1.0 / mean_cpu
        cpu_rps = cores * per_core
        nic_rps = self.wire_rate_Bps / mean_wire
        rec_rps = None
        if mode == "ktls-nic" and self.params.max_records_per_s is not None:
            rec_rps = self.params.max_records_per_s / sum(w * self.records(s) for s, w in mix)
        bounds = {"cpu": cpu_rps, "nic_line_rate": nic_rps}
        if rec_rps is not None:
            bounds["nic_records"] = rec_rps
        bound = min(bounds, key=bounds.__getitem__)
        return CapacityEstimate(mode, cores, bounds[bound], per_core, cpu_rps, nic_rps, rec_rps,
                                bound, mean_cpu, mean_wire, self.provenance(mode))


# -- simulation -------------------------------------------------------------------------------
class SmartNicDevice:
    """The BlueField-2 port as the host sees it: a link at the TCP payload rate of the line
    rate, shared fairly by concurrent responses, and -- only when the profile gives a record
    rate -- a crypto engine that processes ``ktls-nic`` records one after the other."""

    def __init__(self, sim: Simulation, model: TlsCostModel, name: str = "nic") -> None:
        self.model = model
        self.link = Link(sim, name, bandwidth=model.wire_rate_Bps)
        rate = model.params.max_records_per_s
        self.engine = None if rate is None else Device(sim, f"{name}-crypto", servers=1)

    def send(self, mode: str, size: int) -> ProcessGenerator:
        check_mode(mode)
        wire = self.model.wire_bytes(mode, size)
        records = self.model.records(size)
        return self._send(mode, wire, records)

    def _send(self, mode: str, wire: float, records: int) -> ProcessGenerator:
        if self.engine is not None and mode == "ktls-nic":
            yield from self.engine.execute(records / self.model.params.max_records_per_s)
        timing = yield from self.link.transfer(wire)
        return timing


@dataclass(frozen=True)
class NodeRunResult:
    """One simulated run; latencies are from arrival to the last byte leaving the NIC."""

    mode: str
    cores: int
    arrival_rate: float
    offered_cpu_load: float
    requests: int
    throughput_rps: float
    mean_latency_s: float
    p99_latency_s: float
    latency: LatencyStats
    cpu_utilisation: float
    nic_utilisation: float
    provenance: str
    method: str = "simulated"

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["latency"] = self.latency.as_dict()
        return d


class ManagementNodeModel:
    """``cores`` cores and one SmartNIC port serving a Poisson stream of file requests."""

    def __init__(self, model: TlsCostModel, mode: str, file_mix: FileMix, cores: int = 1,
                 seed: int = 0) -> None:
        if not isinstance(model, TlsCostModel):
            raise ConfigError("model must be a TlsCostModel")
        self.model = model
        self.mode = check_mode(mode)
        self.mix = normalise_mix(file_mix)
        self.cores = check_count("cores", cores)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
        self.seed = int(seed)
        self._costs = {s: model.cost(mode, s) for s, _ in self.mix}
        self.capacity = model.capacity(mode, dict(self.mix), cores)

    def run(self, arrival_rate: float, n_requests: int = 20000,
            warmup_fraction: float = 0.1) -> NodeRunResult:
        rate = check_positive("arrival_rate", arrival_rate)
        n = check_count("n_requests", n_requests)
        wf = check_non_negative("warmup_fraction", warmup_fraction)
        if wf >= 1.0:
            raise ConfigError(f"warmup_fraction must be below 1, got {warmup_fraction!r}")
        skip = int(n * wf)
        if n - skip < 1:
            raise ConfigError("no request left after the warm-up; raise n_requests")
        sim = Simulation(self.seed)
        env = sim.env
        cpu = Device(sim, "cpu", servers=self.cores)
        nic = SmartNicDevice(sim, self.model)
        # Common random numbers: the same unit draws for every rate, so runs at different
        # rates (or core counts, or modes) see the same requests in the same order.
        gaps = sim.rng.exponential(1.0, n) / rate
        cum = np.cumsum([w for _, w in self.mix])
        idx = np.minimum(np.searchsorted(cum, sim.rng.random(n), side="right"), len(self.mix) - 1)
        sizes = [self.mix[i][0] for i in idx]
        arrival = np.zeros(n)
        finish = np.zeros(n)
        mode = self.mode

        def request(i: int, size: int) -> ProcessGenerator:
            c = self._costs[size]
            arrival[i] = env.now
            yield from cpu.execute(c.cpu_s)
            if c.delay_s > 0.0:
                yield env.timeout(c.delay_s)
            yield from nic.send(mode, size)
            finish[i] = env.now

        def source() -> ProcessGenerator:
            for i in range(n):
                yield env.timeout(float(gaps[i]))
                env.process(request(i, sizes[i]))

        env.process(source())
        sim.run()
        a, f = arrival[skip:], finish[skip:]
        lat = LatencyStats.from_latencies(f - a)
        span = float(f.max() - a.min())
        mean_cpu = sum(w * self._costs[s].cpu_s for s, w in self.mix)
        return NodeRunResult(
            mode=mode, cores=self.cores, arrival_rate=rate,
            offered_cpu_load=rate * mean_cpu / self.cores, requests=int(a.size),
            throughput_rps=a.size / span if span > 0 else float("inf"),
            mean_latency_s=lat.mean, p99_latency_s=lat.p99, latency=lat,
            cpu_utilisation=cpu.utilisation(sim.now), nic_utilisation=nic.link.utilisation(sim.now),
            provenance=self.model.provenance(mode),
        )


def simulate_node(model: TlsCostModel, mode: str, file_mix: FileMix, arrival_rate: float,
                  cores: int = 1, n_requests: int = 20000, seed: int = 0,
                  warmup_fraction: float = 0.1) -> NodeRunResult:
    return ManagementNodeModel(model, mode, file_mix, cores, seed).run(
        arrival_rate, n_requests, warmup_fraction)


# -- planner ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ClientPlan:
    """How many clients ``cores`` cores serve in ``mode`` with p99 under the target."""

    mode: str
    cores: int
    clients: int
    clients_per_core: float
    request_rate_per_client: float
    latency_target_s: float
    p99_latency_s: float | None
    capacity_clients: float
    bound: str
    max_utilisation: float
    provenance: str
    runs: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def clients_per_core(
    mode: str,
    file_mix: FileMix,
    latency_target_s: float,
    request_rate_per_client: float,
    *,
    model: TlsCostModel,
    cores: int = 1,
    n_requests: int = 4000,
    seed: int = 0,
    warmup_fraction: float = 0.1,
    max_utilisation: float = 0.95,
) -> ClientPlan:
    """The most clients (each a Poisson source of ``request_rate_per_client`` requests/s)
    whose simulated p99 latency stays at or under ``latency_target_s``.

    Client counts whose load exceeds ``max_utilisation`` of the closed-form capacity are not
    simulated and count as infeasible: at the capacity the queue grows without bound, and
    close to it a run of ``n_requests`` cannot reach steady state, so it would under-state the
    tail. 0.95 is operating headroom chosen for the planner, not a measured figure; pass 1.0
    to search right up to the capacity. Below that bound the search bisects, every run using
    the same random draws (so the simulated p99 grows monotonically with the client count).
    """
    target = check_positive("latency_target_s", latency_target_s)
    per_client = check_positive("request_rate_per_client", request_rate_per_client)
    umax = check_positive("max_utilisation", max_utilisation)
    if umax > 1.0:
        raise ConfigError(f"max_utilisation must be in (0, 1], got {max_utilisation!r}")
    node = ManagementNodeModel(model, mode, file_mix, cores, seed)
    cap = node.capacity
    limit = umax * cap.requests_per_s
    n_max = math.floor(limit / per_client)
    while n_max > 0 and n_max * per_client >= cap.requests_per_s:  # never at the capacity
        n_max -= 1
    hi = n_max + 1  # smallest client count not allowed
    lo, lo_p99, runs = 0, None, 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        r = node.run(mid * per_client, n_requests, warmup_fraction)
        runs += 1
        if r.p99_latency_s <= target:
            lo, lo_p99 = mid, r.p99_latency_s
        else:
            hi = mid
    return ClientPlan(mode, node.cores, lo, lo / node.cores, per_client, target, lo_p99,
                      cap.requests_per_s / per_client, cap.bound, umax, model.provenance(mode),
                      runs)


def plan_modes(file_mix: FileMix, latency_target_s: float, request_rate_per_client: float, *,
               model: TlsCostModel, cores: int = 1, modes: Iterable[str] = MODES,
               n_requests: int = 4000, seed: int = 0,
               max_utilisation: float = 0.95) -> dict[str, ClientPlan]:
    """:func:`clients_per_core` for each mode: clients per core with and without the DPU."""
    return {m: clients_per_core(m, file_mix, latency_target_s, request_rate_per_client,
                                model=model, cores=cores, n_requests=n_requests, seed=seed,
                                max_utilisation=max_utilisation)
            for m in modes}


__all__ = [
    "MODES", "MODELLED_MODES", "VARIANTS", "REQUIRED_PROFILE_FIELDS", "MeasuredCosts",
    "TlsOffloadParams", "TlsCostModel", "ModeCost", "CapacityEstimate", "SmartNicDevice",
    "ManagementNodeModel", "NodeRunResult", "simulate_node", "ClientPlan", "clients_per_core",
    "plan_modes", "normalise_mix",
]
