"""Platforms of Suzuki and Yamana's in-storage computing study (FPGA-only, FPGA&SSD, CSD), as
presets loaded from ``profiles/isc_platforms.toml``.

A platform is ``k`` identical FPGA boards, each with its own DRAM, and the path the stored
bytes (weights, keys) take to that DRAM:

* ``fpga_only`` -- host memory -> the host's pool of PCIe lanes (shared by every board) -> the
  board's own x16 link;
* ``fpga_ssd`` -- SSDs on their pool of lanes -> host memory -> the boards' pool of lanes ->
  the board's x16 link (the paper: 16 lanes each side of the 32);
* ``csd`` -- the board's own NAND flash -> its DRAM, inside the device, not shared.

A preset is data (DRAM, lanes, rates, and how many boards fit on the lanes); running a program
on one is :mod:`cryptoffload.sim.isc.simulation`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from cryptoffload.errors import ProfileError
from cryptoffload.profiles import load_profile
from cryptoffload.sim.core import check_positive

PLATFORM_PROFILE = "isc_platforms"
PLATFORMS = ("fpga_ssd", "fpga_only", "csd")
LABELS = {"fpga_ssd": "FPGA&SSD", "fpga_only": "FPGA-only", "csd": "CSD"}
GB = 1e9

COMMON_FIELDS = ("common.dram_gb", "common.lane_gbps", "common.device_lanes", "common.total_lanes")
PLATFORM_FIELDS = {
    "fpga_only": ("host_lanes",),
    "fpga_ssd": ("fpga_lanes", "ssd_lanes", "ssd_capacity_tb"),
    "csd": ("nand_read_gbps", "nand_capacity_tb", "host_lanes"),
}


@dataclass(frozen=True)
class PlatformPreset:
    name: str
    label: str
    dram_bytes: float
    lane_bps: float
    device_lanes: int
    total_lanes: int
    host_lanes: int = 0
    fpga_lanes: int = 0
    ssd_lanes: int = 0
    nand_read_bps: float = 0.0
    storage_bytes: float = 0.0
    profile: str = ""

    @property
    def max_devices(self) -> int:
        """Boards the lanes can attach (one lane each at least): the paper leaves FPGA&SSD with
        32 boards blank because 32 boards do not fit on the boards' 16 lanes."""
        if self.name == "fpga_ssd":
            return self.fpga_lanes
        return self.host_lanes

    def with_dram(self, dram_bytes: float) -> PlatformPreset:
        return replace(self, dram_bytes=check_positive("DRAM", dram_bytes))

    def describe(self) -> str:
        lane = self.lane_bps / GB
        if self.name == "fpga_only":
            return f"host memory -> {self.host_lanes} shared lanes -> x{self.device_lanes} per board ({lane:g} GB/s/lane)"
        if self.name == "fpga_ssd":
            return (f"SSDs on {self.ssd_lanes} lanes -> host -> {self.fpga_lanes} shared lanes -> x{self.device_lanes} "
                    f"per board ({lane:g} GB/s/lane)")
        return f"own NAND at {self.nand_read_bps / GB:g} GB/s per device"


def load_platforms(profile: str = PLATFORM_PROFILE) -> dict[str, PlatformPreset]:
    """The three presets of ``profile``. Each field's own range (lanes a whole number >= 1,
    DRAM and rates above 0) is checked on load by the profile rules (``profiles/rules.py``);
    what is checked here is how the fields fit together (lanes used against lanes present)."""
    required = list(COMMON_FIELDS) + [f"platforms.{p}.{f}" for p, fs in PLATFORM_FIELDS.items() for f in fs]
    prof = load_profile(profile, required=required)
    v = prof.value

    def lanes(field_name: str) -> int:
        return int(v(field_name))  # a whole number >= 1: the profile rule for "_lanes"

    # the fields every platform shares; each preset below names itself and adds its own
    common = PlatformPreset("", "", dram_bytes=v("common.dram_gb") * GB, lane_bps=v("common.lane_gbps") * GB,
                            device_lanes=lanes("common.device_lanes"), total_lanes=lanes("common.total_lanes"),
                            profile=prof.path)
    out = {
        "fpga_only": replace(common, name="fpga_only", label=LABELS["fpga_only"],
                             host_lanes=lanes("platforms.fpga_only.host_lanes")),
        "fpga_ssd": replace(common, name="fpga_ssd", label=LABELS["fpga_ssd"],
                            fpga_lanes=lanes("platforms.fpga_ssd.fpga_lanes"),
                            ssd_lanes=lanes("platforms.fpga_ssd.ssd_lanes"),
                            storage_bytes=v("platforms.fpga_ssd.ssd_capacity_tb") * 1e12),
        "csd": replace(common, name="csd", label=LABELS["csd"], nand_read_bps=v("platforms.csd.nand_read_gbps") * GB,
                       storage_bytes=v("platforms.csd.nand_capacity_tb") * 1e12,
                       host_lanes=lanes("platforms.csd.host_lanes")),
    }
    for p in out.values():
        if p.name == "fpga_ssd" and p.fpga_lanes + p.ssd_lanes > p.total_lanes:
            raise ProfileError(f"{prof.path}: FPGA&SSD uses {p.fpga_lanes}+{p.ssd_lanes} lanes, more than "
                               f"the {p.total_lanes} in total; lower 'platforms.fpga_ssd.fpga_lanes' or "
                               "'ssd_lanes', or raise 'common.total_lanes'")
        if p.host_lanes > p.total_lanes:
            raise ProfileError(f"{prof.path}: {p.name} uses {p.host_lanes} lanes, more than the {p.total_lanes} in "
                               f"total; lower 'platforms.{p.name}.host_lanes' or raise 'common.total_lanes'")
    return out


__all__ = ["LABELS", "PLATFORMS", "PLATFORM_PROFILE", "PlatformPreset", "load_platforms"]
