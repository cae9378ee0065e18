"""The in-storage platforms' presets: the paper's lanes and rates, and profiles whose fields do
not fit together refused naming the field to change."""

from __future__ import annotations

import pytest

from cryptoffload.errors import ProfileError
from cryptoffload.profiles import builtin_profile_path
from cryptoffload.sim.isc.platform import load_platforms

GB = 1e9


def _profile(tmp_path, old: str, new: str) -> str:
    text = builtin_profile_path("isc_platforms").read_text(encoding="utf-8")
    assert text.count(old) == 1
    path = tmp_path / "isc.toml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return str(path)


def test_presets_follow_the_papers_lanes(presets) -> None:
    assert set(presets) == {"fpga_only", "fpga_ssd", "csd"}
    assert presets["fpga_ssd"].max_devices == 16   # 32 boards do not fit: the paper's blank cell
    assert presets["fpga_only"].max_devices == presets["csd"].max_devices == 32
    assert presets["csd"].nand_read_bps == 8 * GB and presets["csd"].dram_bytes == 8 * GB


@pytest.mark.parametrize(("old", "new", "needle"), [
    ("ssd_lanes = { value = 16,", "ssd_lanes = { value = 17,",
     "FPGA&SSD uses 16+17 lanes, more than the 32 in total; lower 'platforms.fpga_ssd.fpga_lanes'"),
    ("host_lanes = { value = 32, source = \"the paper's section 4.5.2: FPGA-only",
     "host_lanes = { value = 33, source = \"the paper's section 4.5.2: FPGA-only",
     "fpga_only uses 33 lanes, more than the 32 in total; lower 'platforms.fpga_only.host_lanes'"),
    # one field's own range is the profile rules' (refused on load, naming the field)
    ("device_lanes = { value = 16,", "device_lanes = { value = 15.5,", "'common.device_lanes' is a count"),
    ("nand_read_gbps = { value = 8,", "nand_read_gbps = { value = 0,", "'platforms.csd.nand_read_gbps' is a rate"),
])
def test_bad_presets_are_refused_naming_the_field(tmp_path, old, new, needle) -> None:
    path = _profile(tmp_path, old, new)
    with pytest.raises(ProfileError) as exc:
        load_platforms(path)
    assert needle in str(exc.value) and path in str(exc.value)
