"""Field rules: each profile field name selects what its value may be; every built-in profile
obeys them (the attacks: negative costs gave negative latencies, a zero rate divided by zero,
fractional counts were silently truncated)."""

from __future__ import annotations

import math
import tomllib
from importlib import resources

import pytest

from cryptoffload.profiles import rules
from cryptoffload.profiles.rules import check_bounds, check_value, rule_for


@pytest.mark.parametrize("field, rule", [
    ("ciphers.aes-ecb.fpga_mbps", rules.RATE), ("board.config_clock_hz", rules.RATE),
    ("ciphers.x.software_mbps_bulk_gcrypt", rules.RATE), ("ops.rescale_s", rules.DURATION),
    ("host.cpu_ms", rules.DURATION), ("tls.mss_bytes", rules.BYTES),
    ("tls.per_segment_overhead_bytes", rules.BYTES), ("link.h2d_bytes_per_s", rules.RATE),
    ("ops.encrypt.bytes_out", rules.BYTES), ("paillier.key_bits", rules.BITS),
    ("params.log_q", rules.BITS), ("csd.nand_capacity_tb", rules.CAPACITY), ("host.dram_gb", rules.CAPACITY),
    ("model.weights_gb", rules.AMOUNT), ("x.cpu_share_min", rules.FRACTION), ("x.retransmit_rate", rules.FRACTION),
    ("ciphers.x.slices_pct", rules.PERCENT), ("board.slots", rules.COUNT), ("qat.ring_capacity", rules.COUNT),
    ("params.poly_modulus_degree", rules.COUNT), ("ops.hmult.level", rules.INDEX),
    ("claims.small_tls_over_plain", rules.RATIO), ("x.concurrent_slowdown", rules.RATIO),
    ("eva.vec_size", rules.COUNT), ("eva.input_scale", rules.BITS), ("ops.encrypt.wave_items", rules.COUNT),
    ("x.anything", rules.DEFAULT),
])
def test_names_select_rules(field: str, rule: rules.FieldRule) -> None:
    assert rule_for(field) is rule


@pytest.mark.parametrize("field, value", [
    ("ops.rotate_s", -1e-6),           # a negative cost: negative latencies
    ("ciphers.aes.fpga_mbps", 0.0),    # a zero rate: division by zero
    ("board.slots", 2.5),              # a fractional count: truncated to 2
    ("board.slots", 0.0),
    ("tls.mss_bytes", 1448.5),
    ("x.compute_share", 1.5),
    ("x.slices_pct", 101.0),
    ("x.concurrent_slowdown", -0.1),
    ("ops.level", -1.0),
    ("x.plain_factor", 0.0),
    ("x.cpu_ms", float("nan")),
    ("x.lane_gbps", float("inf")),
    ("link.d2h_bytes_per_s", 0.0),
])
def test_values_their_field_cannot_hold_are_refused_with_the_fix(field: str, value: float) -> None:
    problem = check_value(field, value)
    assert problem is not None and f"'{field}'" in problem
    rule = rule_for(field)
    assert rule.what in problem and rule.fix in problem


@pytest.mark.parametrize("field, value", [
    ("ops.rescale_s", 0.0), ("board.slots", 2.0), ("ops.x.bytes_out", 0.0), ("ops.level", 0.0), ("x.keys_share", 0.0),
    ("tls.record_overhead_bytes", 0.0), ("x.retransmit_rate_max", 1.0),
])
def test_edge_values_that_make_sense_are_accepted(field: str, value: float) -> None:
    assert check_value(field, value) is None


def test_min_max_pairs_are_ordered() -> None:
    assert check_bounds({"a.x_min": 0.1, "a.x": 0.2, "a.x_max": 0.3}) is None
    assert "swap" in check_bounds({"a.x_min": 0.5, "a.x_max": 0.3})
    assert "outside" in check_bounds({"a.x_min": 0.1, "a.x": 0.5, "a.x_max": 0.3})
    assert "outside" in check_bounds({"a.x_min": 0.4, "a.x": 0.2})


def test_every_builtin_profile_obeys_the_rules() -> None:
    files = [f for f in resources.files("cryptoffload.profiles").iterdir() if f.name.endswith(".toml")]
    assert len(files) >= 5
    for f in files:
        data = tomllib.loads(f.read_text(encoding="utf-8"))
        data.pop("meta")
        flat: dict[str, float] = {}

        def walk(node: dict, prefix: str) -> None:
            for k, v in node.items():
                name = f"{prefix}.{k}" if prefix else k
                if isinstance(v, dict) and "value" in v:
                    flat[name] = float(v["value"])
                elif isinstance(v, dict):
                    walk(v, name)
        walk(data, "")
        for name, v in flat.items():
            assert check_value(name, v) is None, (f.name, name, v)
        assert check_bounds(flat) is None, f.name


@pytest.mark.parametrize("field, value, unit_range", [
    ("ops.rotate_s", 1e-300, "0 or a number between 1e-12 and 1e+06 s"),
    ("ops.rotate_s", 1e308, "0 or a number between 1e-12 and 1e+06 s"),
    ("host.cpu_ms", 1e-300, "between 1e-09 and 1e+09 ms"),
    ("ciphers.x.fpga_mbps", 1e308, "between 1e-06 and 1e+09 mbps"),
    ("link.bandwidth_Bps", 0.5, "between 1 and 1e+15 B/s"),
    ("link.h2d_bytes_per_s", 1e16, "between 1 and 1e+15 bytes/s"),
    ("csd.nand_capacity_tb", 1e7, "between 1e-12 and 1e+06 TB"),
    ("model.weights_gb", 1e-300, "0 or a number between 1e-09 and 1e+09 GB"),
    ("tls.mss_bytes", 1e16, "a whole number between 0 and 1e+15 bytes"),
    ("paillier.key_bits", 1e13, "a whole number between 1 and 1e+12 bits"),
    ("board.slots", 1e10, "a whole number between 1 and 1e+09"),
    ("ops.hmult.level", 1001.0, "a whole number between 0 and 1000"),
    ("x.keys_share", 1e-300, "0 or a number between 1e-12 and 1"),
    ("x.slices_pct", 1e-300, "0 or a number between 1e-10 and 100 %"),
    ("claims.small_tls_over_plain", 1e-300, "a number between 1e-09 and 1e+09"),
    ("x.concurrent_slowdown", 1e308, "a number between 1e-09 and 1e+09"),
])
def test_every_kind_has_a_floor_and_a_ceiling_in_the_fields_unit(field: str, value: float, unit_range: str) -> None:
    problem = check_value(field, value)
    assert problem is not None and f"'{field}'" in problem and unit_range in problem, problem
    assert check_value(field, 0.0 if "0 or" in unit_range else 1.0) is None


def test_zero_and_the_floor_itself_are_accepted() -> None:
    assert check_value("ops.rotate_s", 0.0) is None and check_value("ops.rotate_s", 1e-12) is None
    assert check_value("host.cpu_ms", 1e9) is None and check_value("host.cpu_ms", 1.0000001e9) is not None
    assert check_value("link.bandwidth_Bps", 1.0) is None and check_value("link.bandwidth_Bps", 1e15) is None


def test_seconds_per_item_is_a_duration_and_items_per_second_a_rate() -> None:
    """``per_item_s`` (what calibrate gpu writes: seconds per item) is a duration, not a rate:
    a measured 7.6e-05 s passes; ``requests_per_s`` is a rate."""
    from cryptoffload.profiles.rules import DURATION, RATE, check_value, rule_for

    assert rule_for("ops.encrypt.per_item_s") is DURATION and check_value("ops.encrypt.per_item_s", 7.6e-05) is None
    assert rule_for("client.requests_per_s") is RATE and rule_for("link.h2d_bytes_per_s") is RATE


def _builtin_fields() -> list[tuple[str, str]]:
    from cryptoffload.profiles.loader import load_profile

    root = resources.files("cryptoffload.profiles")
    return [(entry.name, dotted) for entry in root.iterdir() if entry.name.endswith(".toml")
            for dotted in load_profile(str(entry)).values]


@pytest.mark.parametrize("profile, field", _builtin_fields())
def test_every_field_of_every_profile_has_a_floor_and_a_ceiling_in_a_unit(profile: str, field: str) -> None:
    """issue 32: a floor and a ceiling with a unit for every number of a profile. Each field's
    name selects a kind (not the unit-less fallback), whose range is finite and, for a real
    number, starts above 0; the kind's unit (or a dimensionless kind's name) is in the refusal."""
    rule = rule_for(field)
    assert rule is not rules.DEFAULT, f"{profile}: {field} names no unit or kind"
    assert math.isfinite(rule.ceiling) and (rule.integer or rule.floor > 0), (profile, field, rule)
    problem = check_value(field, rule.ceiling * 1e3 + 1e3)
    unit, _ = rules.unit_of(field, rule)
    assert problem is not None and rule.what in problem and (unit in problem if unit else "(no unit)" in problem)


def test_a_field_whose_name_names_no_unit_is_refused_with_the_words() -> None:
    problem = check_value("ciphers.aes.fpga_mbpz", 300.0)
    assert problem is not None and "names no unit or kind" in problem and "_mbps" in problem
