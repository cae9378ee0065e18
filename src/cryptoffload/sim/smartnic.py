"""TLS offload to a SmartNIC (BlueField-2) for a management node serving files: what one request
costs in each mode, after Miyakawa et al.'s SmartNIC TLS paper
(``cryptoffload.papers.PAPERS["smartnic-tls"]``).

The paper serves files from nginx in four modes -- ``plain`` HTTP, ``tls`` (OpenSSL in user
space), ``ktls`` (the kernel encrypts the records; nginx can use ``SSL_sendfile``) and
``ktls-nic`` (kTLS with the BlueField-2 NIC encrypting) -- times single wget fetches, and finds
that offload made them *slower*, asking why. This module answers with a mechanism: a single fetch
is one connection, so every mode pays the connection's fixed costs (TCP set-up, the user-space
handshake) and kTLS and the NIC add fixed costs of their own (handing the keys to the kernel;
creating the NIC's crypto context through firmware commands), while what they save is per byte
(copies into and out of user space; the encryption). Below a break-even file size offload loses.

This machine has no ``CONFIG_TLS`` and no NIC with TLS offload, so ``ktls`` and ``ktls-nic`` are
MODELLED from this machine's MEASURED CPU seconds per request for ``plain`` and ``tls``
(:class:`MeasuredCosts`) and the figures of ``profiles/tls_offload.toml``. For a file of ``s``
bytes, with ``P(s)`` and ``T(s)`` the measured plain and user-space TLS costs and ``H`` the
measured handshake cost (0 when not given), the record-layer cost is ``D(s) = T(s) - P(s) - H``::

    ktls(s)     = P(s) + H + f_k * D(s)                                   + a * h_k
    ktls-nic(s) = P(s) + H + f_k * D(s) * (f_n + resync(s)) + c * s       + a * (h_k + h_n)

* ``f_k``: the share of the record-layer cost software kTLS keeps (the encryption stays, the
  copies go); ``f_n``: the share of *that* left when the NIC encrypts (framing, driver work).
* ``resync(s)``: software fallback after TCP retransmissions (FreeBSD review D30908: a segment in
  the middle of a record makes the NIC re-read the record up to it), charged at kTLS's per-byte
  cost: ``rho * ceil(s/MSS) * (min(s, R) + min(s, MSS)) / 2 / s``.
* ``c``: the bounce copy of device offload: before Linux 5.19 (``TLS_TX_ZEROCOPY_SENDFILE``) the
  kernel copies sendfile data before the NIC encrypts it; the commit that removed it measured
  33.6 vs 79.9 Gbit/s on one core, i.e. ``c`` = 0.138 ns per byte. The paper's Ubuntu 22.04
  runs 5.15.
* ``h_k``: the kTLS hand-off per connection (``setsockopt(TLS_TX/TLS_RX)``: a kernel TLS context
  and a crypto transform per direction). No direct figure was found; a third-party measurement
  (ConnectX-6 Dx, nginx) saw kTLS pay off "from shortly after 100 kB", so ``h_k`` is that
  break-even size times the per-byte saving measured here (``handoff.ktls_breakeven_bytes``).
* ``h_n``: the NIC's crypto-context set-up per connection: synchronous, serialised firmware
  commands (FreeBSD review D47260 for the same mlx5 NIC family); the same third-party
  measurement served 500 clients 10 kB files at 8.7 MB/s with NIC offload, i.e. ~1.15 ms per
  connection if each request set one up (``handoff.nic_setup_s``; that reading is an
  assumption).
* ``a``: the share of the hand-off that holds the worker (an assumption, 1 by default); the rest
  is added to latency as waiting.

:meth:`TlsCostModel.predicted_fetch_s` turns a measured user-space TLS fetch into a predicted
kTLS or NIC fetch by adding the server-side difference; nothing is calibrated to the paper's
ratios. Provenance: ``plain`` and ``tls`` carry the measured input's (``"measured"``); every
``ktls`` and ``ktls-nic`` number is ``"modelled"``.

Capacity (:meth:`TlsCostModel.capacity`): requests/s per core ``= 1 / mean CPU seconds per
request`` of the file mix; for ``C`` cores ``min(C / cpu, wire rate / wire bytes, record rate /
records)`` -- the NIC's line rate caps large files whatever the CPU saves (25 GbE times
``MSS / (MSS + 90)``; TLS adds 22 bytes per 16 KB record). The node simulation and the
clients-per-core planner are :mod:`cryptoffload.sim.tls_node`.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Iterable, Mapping, Union

import numpy as np

from cryptoffload.checks import JsonDict
from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.profiles.loader import Profile, load_profile
from cryptoffload.sim.core import check_count, check_non_negative, check_positive

SERVING_MODES: tuple[str, ...] = ("plain", "tls", "ktls", "ktls-nic")
"""The paper's modes (1)-(4), named as in :mod:`cryptoffload.apps.tls`."""

MEASURED_MODES: tuple[str, ...] = ("plain", "tls")
MODELLED_MODES: tuple[str, ...] = ("ktls", "ktls-nic")
TLS_MODES: tuple[str, ...] = ("tls", "ktls", "ktls-nic")
VARIANTS: tuple[str, ...] = ("nominal", "optimistic", "pessimistic")
"""Which end of each profile range to use: nominal, best case for offload, worst case."""

PROFILE_NAME = "tls_offload"
MODELLED = "simulated"

# profile field used for each parameter, per variant (nominal, optimistic, pessimistic)
_RANGED: dict[str, tuple[str, str, str]] = {
    "ktls_fraction": ("ktls.cpu_fraction", "ktls.cpu_fraction_min", "ktls.cpu_fraction_max"),
    "nic_fraction": ("nic.cpu_fraction_of_ktls", "nic.cpu_fraction_of_ktls_min",
                     "nic.cpu_fraction_of_ktls_max"),
    "retransmit_rate": ("nic.retransmit_rate", "nic.retransmit_rate_min",
                        "nic.retransmit_rate_max"),
    "handoff_cpu_share": ("handoff.cpu_share", "handoff.cpu_share_min", "handoff.cpu_share_max"),
    "ktls_breakeven_bytes": ("handoff.ktls_breakeven_bytes", "handoff.ktls_breakeven_bytes_min",
                             "handoff.ktls_breakeven_bytes_max"),
    "nic_setup_s": ("handoff.nic_setup_s", "handoff.nic_setup_s_min", "handoff.nic_setup_s_max"),
}
_FIXED: dict[str, str] = {
    "line_rate_bps": "nic.line_rate_bps",
    "bounce_copy_s_per_byte": "nic.bounce_copy_s_per_byte",
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
    if mode not in SERVING_MODES:
        raise ConfigError(f"unknown TLS mode {mode!r}; choose one of {', '.join(SERVING_MODES)}")
    return mode


# -- measured inputs --------------------------------------------------------------------------
@dataclass(frozen=True)
class MeasuredCosts:
    """CPU seconds per request measured on THIS machine for ``plain`` and ``tls``.

    ``plain_s`` and ``tls_s`` map file size (bytes) to CPU seconds per request (one request
    per connection, handshake included, as with the paper's wget); both must cover the same
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
            raise ConfigError(f"measured costs cannot carry provenance {MODELLED!r}")
        object.__setattr__(self, "plain_s", dict(sorted(plain.items())))
        object.__setattr__(self, "tls_s", dict(sorted(tls.items())))
        object.__setattr__(self, "handshake_s", hs)

    @staticmethod
    def _table(name: str, table: Mapping[int, float]) -> dict[int, float]:
        if not isinstance(table, Mapping) or not table:
            raise ConfigError(f"{name} must be a non-empty mapping of file size -> seconds")
        return {
            check_count(f"{name} file size (bytes)", k): check_positive(f"{name}[{k}]", v)
            for k, v in table.items()
        }

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(self.plain_s)

    def handshake_intercept(self) -> float:
        """The per-connection part of the TLS increment, from the measurements alone: the
        intercept at size 0 of the line through ``tls - plain`` at the smallest and largest
        measured sizes (the rest grows with the bytes), clipped to ``[0, smallest increment]``.
        With one size there is no line, and the answer is 0."""
        lo, hi = self.sizes[0], self.sizes[-1]
        d_lo, d_hi = self.tls_s[lo] - self.plain_s[lo], self.tls_s[hi] - self.plain_s[hi]
        if hi == lo:
            return 0.0
        per_byte = max(0.0, (d_hi - d_lo) / (hi - lo))
        return min(max(0.0, d_lo - per_byte * lo), min(self.tls_s[s] - self.plain_s[s] for s in self.sizes))

    def with_handshake(self, handshake_s: float | None = None) -> MeasuredCosts:
        """A copy whose ``handshake_s`` is given, or estimated by :meth:`handshake_intercept`."""
        hs = self.handshake_intercept() if handshake_s is None else handshake_s
        return replace(self, handshake_s=hs)

    def plain(self, size: int) -> float:
        return _interpolate("plain_s", self.plain_s, size)

    def tls(self, size: int) -> float:
        return _interpolate("tls_s", self.tls_s, size)


def _interpolate(name: str, table: Mapping[int, float], size: int) -> float:
    """Exact value, or linear between the two nearest measured sizes; never extrapolated."""
    size = check_count("file size (bytes)", size)
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
    ktls_breakeven_bytes: float
    nic_setup_s: float
    line_rate_bps: float
    bounce_copy_s_per_byte: float
    record_bytes: int
    record_overhead_bytes: float
    mss_bytes: int
    segment_overhead_bytes: float
    max_records_per_s: float | None = None
    variant: str = "nominal"
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)
    #: each parameter's kind as its profile value states it (cited, assumed, derived, ...): a table
    #: that shows a parameter labels it from here, never by hand
    provenances: Mapping[str, str] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for name in _FRACTIONS:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0.0 <= v <= 1.0):
                raise ConfigError(f"{name} must be a number in [0, 1], got {v!r}")
        check_positive("line_rate_bps", self.line_rate_bps)
        for name in ("record_overhead_bytes", "segment_overhead_bytes", "ktls_breakeven_bytes", "nic_setup_s",
                     "bounce_copy_s_per_byte"):
            check_non_negative(name, getattr(self, name))
        for name in ("record_bytes", "mss_bytes"):
            object.__setattr__(self, name, check_count(name, getattr(self, name)))
        if self.max_records_per_s is not None:
            check_positive("max_records_per_s", self.max_records_per_s)
        if self.variant not in VARIANTS:
            raise ConfigError(
                f"unknown variant {self.variant!r}; choose one of {', '.join(VARIANTS)}")

    def input_names(self, profile: str = PROFILE_NAME) -> list[str]:
        """The profile fields this variant reads, as ``"profile:field"`` (what a result table
        says it depends on, so that a fitted field of another variant is not counted)."""
        return sorted(f"{profile}:{src.split(':', 1)[0]}" for src in self.sources.values()
                      if not src.startswith("override"))

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
        provenances: dict[str, str] = {}
        fields = [(name, triple[idx]) for name, triple in _RANGED.items()] + list(_FIXED.items())
        fields += [(name, dotted) for name, dotted in OPTIONAL_PROFILE_FIELDS.items() if profile.get(dotted) is not None]
        for name, dotted in fields:
            kw[name] = profile.value(dotted)  # ProfileError naming the field when missing
            sources[name] = f"{dotted}: {profile.source(dotted)}"
            provenances[name] = profile.provenance(dotted)
        for name in ("record_bytes", "mss_bytes"):
            v = kw[name]
            if v != int(v):
                raise ProfileError(f"{profile.path}: field '{_FIXED[name]}' must be a whole "
                                   f"number of bytes, got {v!r}")
            kw[name] = int(v)
        try:
            return cls(variant=variant, sources=sources, provenances=provenances, **kw)
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

    def as_dict(self) -> JsonDict:
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

    def as_dict(self) -> JsonDict:
        return asdict(self)


FileMix = Union[int, Mapping[int, float]]


def normalise_mix(file_mix: FileMix) -> tuple[tuple[int, float], ...]:
    """``{size: weight}`` (or one size) -> ``((size, probability), ...)`` sorted by size."""
    if isinstance(file_mix, (int, np.integer)) and not isinstance(file_mix, bool):
        return ((check_count("file size (bytes)", file_mix), 1.0),)
    if not isinstance(file_mix, Mapping) or not file_mix:
        raise ConfigError("file_mix must be a file size or a non-empty {size: weight} mapping, "
                          f"got {file_mix!r}")
    items = {check_count("file size (bytes)", k): check_positive(f"weight of {k}-byte files", w)
             for k, w in file_mix.items()}
    total = sum(items.values())
    return tuple((s, w / total) for s, w in sorted(items.items()))


@dataclass(frozen=True)
class TlsCostModel:
    """CPU seconds, non-CPU delay and wire bytes per request in each mode (see module doc).
    A price list, not a Device or a Link: the CPU and the NIC's wire it prices are simulated as
    resources in :mod:`.tls_node` (a ``FifoDevice`` and a ``SharedLink`` typed as a Link)."""

    measured: MeasuredCosts
    params: TlsOffloadParams
    handoff_ktls_s: float = field(init=False)
    """kTLS key hand-off per connection (seconds, CPU + waiting): the cited break-even file size
    times the per-byte record-layer cost kTLS removes here (see the module docstring)."""
    handoff_nic_s: float = field(init=False)
    """Extra per-connection set-up of the NIC's crypto context (seconds, CPU + waiting): cited."""

    def __post_init__(self) -> None:
        if not isinstance(self.measured, MeasuredCosts):
            raise ConfigError("measured must be a MeasuredCosts")
        if not isinstance(self.params, TlsOffloadParams):
            raise ConfigError("params must be a TlsOffloadParams")
        object.__setattr__(self, "handoff_ktls_s", self.params.ktls_breakeven_bytes * self.ktls_saving_per_byte_s)
        object.__setattr__(self, "handoff_nic_s", self.params.nic_setup_s)

    @property
    def ktls_saving_per_byte_s(self) -> float:
        """CPU seconds per byte kTLS saves over user-space TLS: the share ``1 - ktls_fraction`` of
        the measured record-layer cost, per byte of the largest measured file (where the
        per-connection part is negligible)."""
        big = self.measured.sizes[-1]
        return (1.0 - self.params.ktls_fraction) * self.record_layer_s(big) / big

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

    def records(self, size: int) -> int:
        return math.ceil(size / self.params.record_bytes)

    def wire_bytes(self, mode: str, size: int) -> float:
        """Payload bytes the NIC sends: the file, plus record headers and tags in TLS modes."""
        check_mode(mode)
        size = check_count("file size (bytes)", size)
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
        size = check_count("file size (bytes)", size)
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
        bounce = p.bounce_copy_s_per_byte * size if mode == "ktls-nic" else 0.0
        cpu_handoff = p.handoff_cpu_share * handoff
        delay = handoff - cpu_handoff
        cpu = plain + (m.handshake_s or 0.0) + kept + resync + bounce + cpu_handoff
        return ModeCost(mode, size, cpu, delay, self.wire_bytes(mode, size), MODELLED,
                        {"plain_s": plain, "handshake_s": m.handshake_s or 0.0,
                         "record_layer_s": kept, "resync_s": resync, "bounce_copy_s": bounce,
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
        return {mode: {s: self.cost(mode, s) for s in sz} for mode in SERVING_MODES}

    def predicted_fetch_s(self, mode: str, size: int, tls_fetch_s: float) -> float:
        """One client fetch in ``mode``, predicted from a measured user-space TLS fetch of the
        same file: the measured time plus what changes on the server (hand-off, record-layer
        work, bounce copy) between ``tls`` and ``mode``. The client's own work, the handshake
        and the network are the same in every TLS mode, so they cancel."""
        if check_mode(mode) == "plain":
            raise ConfigError("a plain fetch is measured, not predicted from a TLS one")
        tls = self.cost("tls", size)
        c = self.cost(mode, size)
        return check_positive("tls_fetch_s", tls_fetch_s) + (c.cpu_s + c.delay_s) - tls.cpu_s

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


__all__ = [
    "SERVING_MODES", "MODELLED_MODES", "VARIANTS", "REQUIRED_PROFILE_FIELDS", "MeasuredCosts",
    "TlsOffloadParams", "TlsCostModel", "ModeCost", "CapacityEstimate", "normalise_mix", "check_mode",
]
