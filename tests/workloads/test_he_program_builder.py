"""The program builder: sizes follow the ring at each value's level, additions across levels
are mod-switched first, a multiply makes three polynomials, and running out of levels is refused."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.ckks import CkksParams
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.he_program_builder import ProgramBuilder

P = CkksParams(8192, (50, 40, 40, 50), 40)


def test_sizes_levels_and_keys() -> None:
    b = ProgramBuilder(P)
    x = b.input("x")
    y = b.rescale(b.relinearize(b.mul(x, x)))
    z = b.add(y, b.rotate(x, 4))                       # y at level 1, the rotation at 2: switched down
    ops = b.ops
    assert [op.op for op in ops] == ["mul", "relinearize", "rescale", "rotate", "mod_switch", "add"]
    assert ops[0].bytes_out == P.ciphertext_bytes(2, 3) and ops[1].bytes_out == P.ciphertext_bytes(2)
    assert ops[1].keys == ("relin",) and ops[3].keys == ("galois:4",)
    assert b.level[y] == 1 and b.level[z] == 1 and ops[4].level == 2
    assert ops[5].bytes_in == 2 * P.ciphertext_bytes(1)
    w = b.mul_plain(z, "w")
    assert b.ops[-1].plaintext == "w" and b.ops[-1].plaintext_bytes == P.plaintext_bytes(1)
    b.rescale(w)
    with pytest.raises(ConfigError, match="more levels"):
        b.rescale(b.ops[-1].output)
