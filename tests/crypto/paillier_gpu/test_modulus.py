"""Batched modular arithmetic on every runtime present, against Python's ``pow``: products,
exponentiations over a public exponent length, column products over several reduction levels."""

from __future__ import annotations

import secrets
from functools import reduce

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.crypto._native import gpu_runtime as gr
from cryptoffload.crypto._native.gpu_kernels import WIDTHS
from cryptoffload.crypto.paillier_gpu import REDUCE_GROUP, Modulus
from cryptoffload.errors import ConfigError

from .conftest import property_bits


def _extreme_moduli() -> list[int]:
    """Per width: the smallest modulus that needs it, one with all-ones limbs, a random one."""
    out = []
    prev = 0
    for w in WIDTHS:
        out += [(1 << (32 * prev)) + 1 if prev else 3, (1 << (32 * w)) - 1, secrets.randbits(32 * w) | 1 | (1 << (32 * w - 1))]
        prev = w
    return out


def _edge_values(m: int) -> list[int]:
    w = gr.width_for_bits(m.bit_length())
    cands = [0, 1, 2, m - 1, m - 2, (1 << 32) - 1, (1 << (32 * (w - 1))) - 1, m // 2, secrets.randbelow(m)]
    return [v % m for v in cands]


@pytest.mark.parametrize("m", _extreme_moduli(), ids=lambda m: f"{m.bit_length()}b")
def test_mulmod_and_powm_edges_at_every_width(rt: gr.Runtime, m: int) -> None:
    mod = Modulus(rt, m)
    vals = _edge_values(m)
    a = [x for x in vals for _ in vals]
    b = [y for _ in vals for y in vals]
    assert mod.mulmod(a, b) == [x * y % m for x, y in zip(a, b)]
    # a 96-bit bound keeps the widest moduli cheap; the full-length default is tested below
    exps = [0, 1, 2, (1 << 64) - 1, secrets.randbits(96), (1 << 96) - 1]
    bases = [vals[i % len(vals)] for i in range(len(exps))]
    assert mod.powm(bases, exps, exp_bits=96) == [pow(x, e, m) for x, e in zip(bases, exps)]


class _Spy:
    """The runtime, recording each launch's kernel and scalar arguments."""

    def __init__(self, rt: gr.Runtime) -> None:
        self._rt, self.launches = rt, []

    def __getattr__(self, name: str):
        return getattr(self._rt, name)

    def launch(self, kernel, width, instances, args, stream) -> None:
        self.launches.append((kernel, [a for a in args if isinstance(a, int)]))
        self._rt.launch(kernel, width, instances, args, stream)


def test_powm_pads_exponents_to_the_modulus_length_unless_given_a_bound(rt: gr.Runtime) -> None:
    """The exponent length a launch processes is public: by default the modulus's (a batch of
    small secret exponents must not run shorter), else the caller's bound."""
    m = secrets.randbits(1024) | 1 | (1 << 1023)
    spy = _Spy(rt)
    mod = Modulus(spy, m)   # type: ignore[arg-type]
    small = [3, 5]
    assert mod.powm([7, 11], small) == [pow(7, 3, m), pow(11, 5, m)]
    assert mod.powm([7, 11], small, exp_bits=40) == [pow(7, 3, m), pow(11, 5, m)]
    big = [1 << 1100]   # longer than the modulus: processed over its own length
    assert mod.powm([7], big) == [pow(7, big[0], m)]
    ews = [args[1] for kernel, args in spy.launches if kernel == "powm"]   # (count, ew)
    assert ews == [1024 // 32, 2, -(-1101 // 32)]
    with pytest.raises(ConfigError, match="more than the 2-bit bound"):
        mod.powm([7], [5], exp_bits=2)
    with pytest.raises(ConfigError, match="exp_bits"):
        mod.powm([7], [5], exp_bits=0)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_powm_matches_pow(rt: gr.Runtime, data: st.DataObject) -> None:
    bits = data.draw(st.sampled_from(property_bits(rt, [64, 1024, 2048, 3000, 6144])), label="bits")
    m = data.draw(st.integers(3, (1 << bits) - 1).map(lambda x: x | 1), label="m")
    bases = data.draw(st.lists(st.integers(0, 1 << (bits + 8)), min_size=1, max_size=4), label="bases")
    exps = data.draw(st.lists(st.integers(0, 1 << 300), min_size=len(bases), max_size=len(bases)), label="exps")
    assert Modulus(rt, m).powm(bases, exps, exp_bits=301) == [pow(b, e, m) for b, e in zip(bases, exps)]


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 70), cols=st.integers(1, 3), data=st.data())
def test_column_products_match_python(rt: gr.Runtime, rows: int, cols: int, data: st.DataObject) -> None:
    bits = data.draw(st.sampled_from(property_bits(rt, [64, 511, 512, 513, 1024, 1536, 2047, 2048, 3072, 4096, 6144])),
                     label="bits")
    m = data.draw(st.integers(1 << (bits - 1), (1 << bits) - 1).map(lambda x: x | 1), label="m")
    vals = data.draw(st.lists(st.integers(0, m - 1), min_size=rows * cols, max_size=rows * cols), label="vals")
    want = [reduce(lambda x, y: x * y % m, vals[c::cols], 1) for c in range(cols)]
    assert Modulus(rt, m).column_products(vals, rows, cols) == want


@pytest.mark.parametrize("rows", [REDUCE_GROUP + 1, REDUCE_GROUP ** 2 + 5])
def test_column_products_over_several_levels(rt: gr.Runtime, rows: int) -> None:
    """More rows than one thread multiplies: two levels (33 rows) and three (1,029 rows), with
    a last group shorter than the others."""
    m = secrets.randbits(2048) | 1 | (1 << 2047)
    cols = 2
    vals = [secrets.randbelow(m) for _ in range(rows * cols)]
    want = [reduce(lambda x, y: x * y % m, vals[c::cols], 1) for c in range(cols)]
    assert Modulus(rt, m).column_products(vals, rows, cols) == want


def test_bad_moduli_and_values_are_refused(rt: gr.Runtime) -> None:
    with pytest.raises(ConfigError, match="odd"):
        Modulus(rt, 1 << 100)
    with pytest.raises(ConfigError, match="largest width"):
        Modulus(rt, (1 << 6200) + 1)
    mod = Modulus(rt, 1009)
    with pytest.raises(ConfigError, match="factors"):
        mod.mulmod([1009], [1])
    with pytest.raises(ConfigError, match="non-negative"):
        mod.powm([2], [-1])
    with pytest.raises(ConfigError, match="matrix"):
        mod.column_products([1, 2, 3], 2, 2)
    assert mod.mulmod([], []) == [] and mod.powm([], []) == []
