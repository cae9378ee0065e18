"""The simulated GPU against closed forms, and a profile measured on the GPU kernels' CPU twin
driving it (the profile -> simulated device path, with honest provenance: device cpu-twin)."""

from __future__ import annotations

import pytest

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.sim.gpu import GpuOpCost, GpuParams, load_gpu_params, simulate_batches

LAT = 1e-5


def params(**over) -> GpuParams:
    ops = {"encrypt": GpuOpCost(1e-4, 1e-6, 1000, 200.0, 256.0),
           "decrypt": GpuOpCost(2e-4, 3e-6, 500, 256.0, 128.0),
           "aggregate": GpuOpCost(5e-5, 1e-7, 2000, 256.0, 0.0)}
    return GpuParams(over.pop("ops", ops), over.pop("h2d", 1e9), over.pop("d2h", 2e9), over.pop("lat", LAT))


def one_batch(p: GpuParams, op: str, b: int) -> float:
    c = p.ops[op]
    t = LAT + c.bytes_in * b / p.h2d_bytes_per_s + c.kernel_s(b)
    return t + (LAT + c.bytes_out * b / p.d2h_bytes_per_s if c.bytes_out else 0.0)


def test_kernel_time_is_launch_plus_items_above_the_wave() -> None:
    c = GpuOpCost(1e-4, 1e-6, 1000, 0, 0)
    assert c.kernel_s(10) == pytest.approx(1e-4 + 1e-3)
    assert c.kernel_s(1000) == c.kernel_s(1)
    assert c.kernel_s(5000) == pytest.approx(1e-4 + 5e-3)


@pytest.mark.parametrize("op,b", [("encrypt", 100), ("encrypt", 50_000), ("decrypt", 20_000), ("aggregate", 4096)])
def test_one_batch_on_one_stream_is_copy_in_kernel_copy_out(op: str, b: int) -> None:
    p = params()
    pred = simulate_batches(p, [(op, b)], streams=1)
    assert pred.makespan_s == pytest.approx(one_batch(p, op, b), rel=1e-9)
    assert pred.items == b and pred.throughput_ops == pytest.approx(b / pred.makespan_s)


def test_one_stream_runs_batches_back_to_back() -> None:
    p = params()
    batches = [("encrypt", 3000), ("decrypt", 7000), ("encrypt", 10)]
    assert simulate_batches(p, batches, 1).makespan_s == pytest.approx(sum(one_batch(p, *b) for b in batches))


def test_two_streams_overlap_copies_with_compute() -> None:
    """Copies free (huge bandwidth, no latency): two streams take the sum of the kernel times
    (the GPU computes one batch at a time); with real copies two streams beat one."""
    fast = params(h2d=1e18, d2h=1e18, lat=0.0)
    batches = [("encrypt", 20_000)] * 4
    assert simulate_batches(fast, batches, 2).makespan_s == pytest.approx(4 * fast.ops["encrypt"].kernel_s(20_000))
    slow = params(h2d=2e8, d2h=2e8)
    one, two = simulate_batches(slow, batches, 1), simulate_batches(slow, batches, 2)
    assert two.makespan_s < one.makespan_s
    assert two.makespan_s >= 4 * slow.ops["encrypt"].kernel_s(20_000)


def test_bad_batches_and_costs_are_refused() -> None:
    with pytest.raises(ConfigError, match="operation"):
        simulate_batches(params(), [("sign", 10)])
    with pytest.raises(ConfigError, match="no batches"):
        simulate_batches(params(), [])
    with pytest.raises(ConfigError):
        GpuOpCost(-1, 1e-6, 10, 0, 0)
    with pytest.raises(ConfigError, match="wave"):
        GpuOpCost(0, 1e-6, 0.5, 0, 0)
    with pytest.raises(ConfigError, match="unknown GPU operation"):
        params().op("sign")


def test_a_profile_without_gpu_fields_is_refused(tmp_path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[meta]\nname = "x"\nkind = "measured"\ndescription = "d"\n'
                    '[link]\nlatency_s = { value = 1e-5, source = "s" }\n')
    with pytest.raises(ProfileError, match="ops.encrypt.fixed_s"):
        load_gpu_params(str(path))
