"""The reconfiguration platform built from its profiles: derived reconfiguration time, per-byte
costs, a measured software profile mixed into the cited board, and the refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cryptoffload.crypto.ciphers import CIPHERS
from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.profiles import builtin_profile_path
from cryptoffload.sim.reconfig.platform import load_reconfig_platform, required_fields


def test_cited_board_and_its_derived_reconfiguration_time() -> None:
    plat = load_reconfig_platform()
    assert plat.ciphers == tuple(CIPHERS) and plat.k == len(CIPHERS) and plat.slots == 2
    # 29,063,072 bits, 8 bits per clock at 66 MHz (the profile's inputs)
    assert plat.reconfig_time == pytest.approx(29_063_072 / (8 * 66e6))
    assert plat.packet_overhead == pytest.approx(500e-9)
    assert plat.sw_kind == "cited" and plat.carried == [] and plat.profiles == ["profiles/virtex2_ciphers.toml"]
    aes = plat.ciphers.index("aes-ecb")
    assert plat.fpga_seconds_per_byte[aes] == pytest.approx(8 / (plat.fpga_mbps[aes] * 1e6))
    assert plat.display(aes) != "" and "fpga_mbps" in " ".join(required_fields())
    assert load_reconfig_platform(reconfig_time=0.06).reconfig_time == 0.06


def test_mean_service_time_and_throughput_factor() -> None:
    plat = load_reconfig_platform()
    mix = np.full(plat.k, 1 / plat.k)
    on_fpga = np.zeros(plat.k, dtype=bool)
    on_fpga[0] = True
    want = sum(mix[c] * (1000 * (plat.fpga_seconds_per_byte if on_fpga[c] else plat.sw_seconds_per_byte)[c]
                         + plat.packet_overhead) for c in range(plat.k))
    assert plat.mean_service_s(mix, 1000.0, on_fpga) == pytest.approx(want)
    fast = plat.with_throughput_factor(8.0, "megabytes")
    assert np.allclose(fast.sw_mbps, 8 * plat.sw_mbps) and np.allclose(fast.fpga_mbps, 8 * plat.fpga_mbps)
    assert fast.profiles[-1] == "megabytes" and plat.profiles == ["profiles/virtex2_ciphers.toml"]
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ConfigError, match="throughput factor"):
            plat.with_throughput_factor(bad, "x")


def _measured(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "measured.toml"
    path.write_text('[meta]\nname = "m"\nkind = "measured"\ndescription = "test"\n' + body)
    return path


def test_a_measured_software_profile_replaces_what_it_has(tmp_path: Path) -> None:
    cited = load_reconfig_platform()
    path = _measured(tmp_path, '[ciphers.aes-ecb]\nsoftware_mbps = { value = 1234.5, source = "here" }\n')
    plat = load_reconfig_platform(sw_profile=str(path))
    aes = plat.ciphers.index("aes-ecb")
    assert plat.sw_mbps[aes] == 1234.5 and plat.sw_kind == "measured"
    assert sorted(plat.carried) == sorted(c for c in CIPHERS if c != "aes-ecb")
    others = [i for i in range(plat.k) if i != aes]
    assert np.array_equal(plat.sw_mbps[others], cited.sw_mbps[others])
    assert np.array_equal(plat.fpga_mbps, cited.fpga_mbps) and len(plat.profiles) == 2


def test_refusals(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="missing for every cipher"):
        load_reconfig_platform(sw_profile=str(_measured(tmp_path, '[board]\nx_s = { value = 1, source = "s" }\n')))
    with pytest.raises(ProfileError, match=r"software_mbps' is a rate in mbps and must be a number between 1e-06 and 1e\+09 mbps, got -1\.0"):
        load_reconfig_platform(sw_profile=str(_measured(
            tmp_path, '[ciphers.aes-ecb]\nsoftware_mbps = { value = -1.0, source = "s" }\n')))
    for bad in (-1.0, float("nan")):
        with pytest.raises(ConfigError, match="reconfiguration time"):
            load_reconfig_platform(reconfig_time=bad)
    text = builtin_profile_path("virtex2_ciphers").read_text()
    three = tmp_path / "three.toml"
    three.write_text(text.replace("slots = { value = 2,", "slots = { value = 3,"))
    with pytest.raises(ProfileError, match="exactly 2 slots"):
        load_reconfig_platform(str(three))
    slow = tmp_path / "slow.toml"
    slow.write_text(text.replace("fpga_mbps = { value = 2398.0", "fpga_mbps = { value = 0.0"))
    with pytest.raises(ProfileError, match=r"fpga_mbps' is a rate in mbps and must be a number between 1e-06 and 1e\+09 mbps, got 0\.0"):
        load_reconfig_platform(str(slow))
