"""Per-level op costs for the bootstrap planner: read from a profile, interpolated between the
measured levels, limb-scaled beyond them, scaled to another ring by N log N."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.policies.bootstrap_costs import (OPS, LevelCosts, OpCostTable, builtin_rings, load_costs,
                                                   table_from_profile, uniform_costs)
from cryptoffload.profiles.loader import load_profile


def level(v: float) -> LevelCosts:
    return LevelCosts(*(v * (k + 1) for k in range(len(OPS))))


TABLE = OpCostTable(4096, {2: level(1.0), 6: level(3.0)}, name="t")


def test_measured_levels_are_returned_as_measured_and_between_them_interpolated() -> None:
    assert TABLE.at(2) == level(1.0) and TABLE.at(6) == level(3.0)
    mid = TABLE.at(4)
    assert mid.rotate_s == pytest.approx(2.0) and mid.mul_s == pytest.approx(12.0)


def test_beyond_the_measured_levels_costs_scale_with_the_limb_count() -> None:
    assert TABLE.at(13).rotate_s == pytest.approx(3.0 * 14 / 7)   # from level 6 (7 limbs)
    assert TABLE.at(0).pmul_s == pytest.approx(3.0 * 1 / 3)      # from level 2 (3 limbs)


def test_another_ring_is_scaled_by_n_log_n_and_says_so() -> None:
    t = TABLE.for_ring(16384)
    factor = 16384 * 14 / (4096 * 12)
    assert t.at(2).rotate_s == pytest.approx(factor) and t.provenance == "derived" and t.scaled_from == 4096
    assert "scaled from N = 4096 to N = 16384" in t.describe()
    assert TABLE.for_ring(4096) is TABLE
    assert t.for_ring(65536).scaled_from == 4096


def test_dag_costs_price_the_stage_at_its_level_with_its_ciphertext_size() -> None:
    c = TABLE.dag_costs(6, bandwidth_Bps=1e9, latency_s=1e-6)
    assert c.rotate_s == 3.0 and c.hoisted_rotate_s == 6.0 and c.pmul_s == 9.0
    assert c.bytes == 2 * 4096 * 7 * 8 and c.limbs is None


def test_an_empty_or_negative_table_is_refused() -> None:
    with pytest.raises(ConfigError):
        OpCostTable(4096, {})
    with pytest.raises(ConfigError):
        OpCostTable(4096, {-1: level(1.0)})


def _profile(path: Path, levels: dict[str, dict[str, float]], ring: int = 8192) -> Path:
    lines = ['[meta]', 'name = "p"', 'kind = "measured"', 'description = "test"', 'machine = "m"', 'date = "d"', '',
             '[ring]', f'poly_modulus_degree = {{ value = {ring}, source = "x" }}']
    for lv, ops in levels.items():
        lines.append(f"[level.{lv}]")
        lines += [f'{op} = {{ value = {v}, source = "x" }}' for op, v in ops.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_profile_is_read_with_its_machine_and_date(tmp_path: Path) -> None:
    p = _profile(tmp_path / "p.toml", {"3": {op: 1e-3 for op in OPS}, "9": {op: 2e-3 for op in OPS}})
    t = table_from_profile(load_profile(str(p)))
    assert t.ring_degree == 8192 and sorted(t.levels) == [3, 9] and t.provenance == "measured"
    assert t.machine == "m" and t.date == "d" and t.at(6).rotate_s == pytest.approx(1.5e-3)
    assert load_costs(str(p), 16384).scaled_from == 8192


def test_a_missing_op_or_a_badly_named_level_is_one_line_naming_the_field(tmp_path: Path) -> None:
    ops = {op: 1e-3 for op in OPS if op != "mul_s"}
    with pytest.raises(ProfileError, match=r"level\.3\.mul_s"):
        table_from_profile(load_profile(str(_profile(tmp_path / "a.toml", {"3": ops}))))
    with pytest.raises(ProfileError, match=r"level\.top"):
        table_from_profile(load_profile(str(_profile(tmp_path / "b.toml", {"top": {op: 1e-3 for op in OPS}}))))
    with pytest.raises(ProfileError, match="no \\[level"):
        table_from_profile(load_profile(str(_profile(tmp_path / "c.toml", {}))))
    with pytest.raises(ProfileError, match="above 0"):
        table_from_profile(load_profile(str(_profile(tmp_path / "d.toml", {"3": dict(ops, mul_s=0, rotate_s=0)}))))


def test_uniform_costs_do_not_depend_on_the_level() -> None:
    t = uniform_costs(4096, 30, rotate_s=2.0)
    assert t.at(0) == t.at(30) and t.at(7).rotate_s == 2.0


@pytest.mark.parametrize("ring", [1024, 4096, 65536, 131072])
def test_the_shipped_profiles_load_for_every_ring(ring: int) -> None:
    rings = builtin_rings()
    if not rings:
        pytest.skip("no shipped OpenFHE bootstrap profile")
    t = load_costs(None, ring)
    assert t.ring_degree == ring and t.provenance in ("stored", "derived")
    nearest = min(rings, key=lambda r: (abs(math.log2(r) - math.log2(ring)), -r))
    assert t.scaled_from == (0 if nearest == ring else nearest)
