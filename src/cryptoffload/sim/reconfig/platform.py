"""The FPGA-reconfiguration paper's platform (host CPU + FPGA board with cipher slots) built from cost profiles.

Software throughput may come from a second, *measured* profile (``cryptoffload calibrate
ciphers``) while the FPGA stays the cited Virtex-II: that asks "what would this machine's CPU
gain from that board". Ciphers the measured profile lacks (RC6 has no implementation here) keep
the cited value and are listed in ``carried``, so the output can say the table is mixed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from cryptoffload.crypto.ciphers import CIPHERS, DISPLAY_NAMES
from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.profiles import Profile, load_profile
from cryptoffload.sim.devices import reconfig_time_from_bitstream

BOARD_FIELDS = ("board.slots", "board.bitstream_bits", "board.config_bits_per_clock",
                "board.config_clock_hz", "board.packet_overhead_s")
CIPHER_FIELDS = ("software_mbps", "fpga_mbps", "slices_pct")


def required_fields() -> list[str]:
    return list(BOARD_FIELDS) + [f"ciphers.{c}.{f}" for c in CIPHERS for f in CIPHER_FIELDS]


@dataclass
class ReconfigPlatform:
    ciphers: tuple[str, ...]
    sw_mbps: np.ndarray
    fpga_mbps: np.ndarray
    slices_pct: np.ndarray
    slots: int
    reconfig_time: float
    packet_overhead: float
    profiles: list[str] = field(default_factory=list)
    sw_kind: str = "cited"
    carried: list[str] = field(default_factory=list)  # ciphers whose software value stayed cited

    @property
    def k(self) -> int:
        return len(self.ciphers)

    @property
    def sw_seconds_per_byte(self) -> np.ndarray:
        return 8.0 / (self.sw_mbps * 1e6)

    @property
    def fpga_seconds_per_byte(self) -> np.ndarray:
        return 8.0 / (self.fpga_mbps * 1e6)

    def with_throughput_factor(self, factor: float, label: str) -> ReconfigPlatform:
        """The same board with every software and FPGA throughput multiplied by ``factor`` (a
        reading of the cited table, e.g. "Mbps" read as megabytes per second: ``factor=8``)."""
        if not (factor > 0 and np.isfinite(factor)):
            raise ConfigError(f"throughput factor must be a positive number, got {factor!r}")
        return replace(self, sw_mbps=self.sw_mbps * factor, fpga_mbps=self.fpga_mbps * factor,
                       profiles=[*self.profiles, label])

    def mean_service_s(self, mix: np.ndarray, mean_size: float, fpga: np.ndarray) -> float:
        """Mean seconds per request when cipher ``c`` (share ``mix[c]``) runs on the FPGA where
        ``fpga[c]`` and in software elsewhere: the inverse of the rate a single server carries."""
        per_byte = np.where(fpga, self.fpga_seconds_per_byte, self.sw_seconds_per_byte)
        return float(np.sum(mix * (mean_size * per_byte + self.packet_overhead)))

    def display(self, i: int) -> str:
        return DISPLAY_NAMES.get(self.ciphers[i], self.ciphers[i])


def load_reconfig_platform(profile: str = "virtex2_ciphers", sw_profile: str | None = None,
                           reconfig_time: float | None = None) -> ReconfigPlatform:
    """Build the platform; refuses a profile lacking any field with a message naming it."""
    prof = load_profile(profile, required=required_fields())
    slots = prof.value("board.slots")
    if slots != 2:
        raise ProfileError(f"{prof.path}: field 'board.slots' is {slots:g}; this model has exactly 2 slots")
    if reconfig_time is None:
        reconfig_time = reconfig_time_from_bitstream(prof.value("board.bitstream_bits"),
                                                     prof.value("board.config_bits_per_clock"),
                                                     prof.value("board.config_clock_hz"))
    elif not (reconfig_time >= 0 and np.isfinite(reconfig_time)):
        raise ConfigError(f"reconfiguration time must be a non-negative number of seconds, got {reconfig_time}")
    sw = np.array([prof.value(f"ciphers.{c}.software_mbps") for c in CIPHERS])
    hw = np.array([prof.value(f"ciphers.{c}.fpga_mbps") for c in CIPHERS])
    sl = np.array([prof.value(f"ciphers.{c}.slices_pct") for c in CIPHERS])
    for arr, what in ((sw, "software_mbps"), (hw, "fpga_mbps")):
        bad = [CIPHERS[i] for i in np.flatnonzero(arr <= 0)]
        if bad:
            raise ProfileError(f"{prof.path}: field 'ciphers.{bad[0]}.{what}' must be positive")
    profiles = [prof.path]
    sw_kind, carried = prof.kind, []
    if sw_profile is not None:
        measured: Profile = load_profile(sw_profile)
        found = 0
        for i, c in enumerate(CIPHERS):
            v = measured.get(f"ciphers.{c}.software_mbps")
            if v is None:
                carried.append(c)
            elif v <= 0:
                raise ProfileError(f"{measured.path}: field 'ciphers.{c}.software_mbps' must be positive")
            else:
                sw[i] = v
                found += 1
        if found == 0:
            raise ProfileError(f"{measured.path}: field 'ciphers.<name>.software_mbps' is missing for every cipher")
        profiles.append(measured.path)
        sw_kind = measured.kind
    return ReconfigPlatform(tuple(CIPHERS), sw, hw, sl, int(slots), float(reconfig_time),
                            prof.value("board.packet_overhead_s"), profiles, sw_kind, carried)
