"""The CNN of the in-storage paper's stated inputs: EVA's rescaling and parameter rules replayed
by hand, sizes in SEAL's layout, the channel count from the stated weight bytes."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.ckks.params import CkksParams
from cryptoffload.errors import ConfigError
from cryptoffload.workloads import he_cnn_eva as ev


def test_eva_lazy_waterline_gives_six_60_bit_data_primes() -> None:
    # by hand: x 30 -> conv 60 -> x^2 120 (rescale, 60) -> a x^2 90 -> FC1 needs it (rescale, 30)
    # -> w 60 -> mask 90 -> act 2 needs it (rescale, 30) -> x^2 60, a x^2 90 -> FC2 needs it
    # (rescale, 30) -> w 60 -> mask 90 -> output (rescale, 30): 5 rescales; output 30 + 30 = 60 bits
    assert ev.eva_coeff_modulus() == (60,) * 7
    p = ev.eva_params()
    assert p.poly_modulus_degree == 16384 and p.total_bits == 420 <= 438
    assert p.ksk_bytes == 6 * 2 * 7 * 16384 * 8
    # scale 40: the waterline is 100 bits; the output (80 + 20 = 100 bits) needs two primes, 60 + 40
    assert ev.eva_coeff_modulus(40, 20)[:2] == (60, 40) and ev.eva_coeff_modulus(40, 20)[-1] == 60


def test_eva_builder_rescales_once_per_value_before_a_multiplication() -> None:
    p = CkksParams(16384, (60,) * 8, 30)
    b = ev.EvaBuilder(p, 30)
    x = b.input("x")
    y = b.mul_plain(x, "w")                # 60: below the waterline + 60 = 90, no rescale
    assert b.scale[y] == 60 and b.level[y] == p.levels
    z = b.mul_plain(y, "w2")               # 90
    u1, u2 = b.mul_plain(z, "a"), b.mul_plain(z, "b")  # z is rescaled once, both uses read it
    assert [op.op for op in b.ops].count("rescale") == 1
    assert b.level[u1] == b.level[u2] == p.levels - 1 and b.scale[u1] == 60
    s = b.add(y, z)                        # unequal scales: the lower one is scaled up first
    assert b.scale[s] == 90 and b.ops[-2].op == "mul_plain" and b.ops[-2].plaintext.startswith("one[")


def test_the_paper_inputs_program() -> None:
    inp = ev.load_paper_inputs()
    prog = ev.eva_cnn(inp.params, inp.shape)
    assert prog.source == "paper-inputs" and inp.shape.channels == 43
    # the channel count is the one whose weights are nearest the stated 3.3 GB
    per = (ev.eva_cnn(inp.params, ev.CnnShape(channels=44)).weight_bytes
           - ev.eva_cnn(inp.params, ev.CnnShape(channels=43)).weight_bytes)
    assert abs(prog.weight_bytes - 3.3e9) <= per / 2
    # keys: one Galois key per rotation step plus the relinearisation key, SEAL-sized
    steps = {k for op in prog.ops for k in op.keys}
    assert prog.key_total_bytes == len(steps) * inp.params.ksk_bytes
    conv = {dy * 28 + dx for dy in range(5) for dx in range(5)} - {0}  # kernel offsets
    sums = {1 << i for i in range(10)} | {1 << i for i in range(7)}   # FC slot sums: log2(784), log2(100)
    assert steps == {f"galois:{k}" for k in conv | sums} | {"relin"} and len(steps) == 31
    # every value ends at level 0 at the latest: the levels suffice
    assert min(op.level for op in prog.ops) >= 0
    assert ev.paper_inputs_program().name == prog.name


def test_bad_shapes_refused() -> None:
    with pytest.raises(ConfigError):
        ev.CnnShape(channels=0)
    with pytest.raises(ConfigError, match="slots"):
        ev.eva_cnn(ev.eva_params(), ev.CnnShape(image=100))
