"""Building an HE program op by op, with every size computed from the ring parameters.

Why apart from the program: the generated CNN, the paper-calibrated program and the program
of the paper's stated inputs are all written with it, while a recorded trace needs none of
it; it tracks each value's level and polynomial count so that a caller writes
``b.rescale(b.mul_plain(x, "w"))`` and the bytes follow.
"""

from __future__ import annotations

from typing import Iterable

from cryptoffload.crypto.ckks.params import CkksParams
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.he_program import HEOp


class ProgramBuilder:
    """Appends ops with sizes computed from the parameters, tracking each value's level."""

    def __init__(self, params: CkksParams) -> None:
        self.p = params
        self.ops: list[HEOp] = []
        self.level: dict[str, int] = {}
        self.polys: dict[str, int] = {}
        self.phase = ""
        self._n = 0

    def input(self, name: str, level: int | None = None) -> str:
        self.level[name] = self.p.levels if level is None else level
        self.polys[name] = 2
        return name

    def _emit(self, op: str, inputs: Iterable[str], *, level: int, out_level: int, out_polys: int = 2,
              keys: tuple[str, ...] = (), plaintext: str | None = None, pt_bytes: int = 0) -> str:
        inputs = tuple(inputs)
        out = f"v{self._n}"
        bytes_in = sum(self.p.ciphertext_bytes(self.level[x], self.polys[x]) for x in inputs)
        self.ops.append(HEOp(len(self.ops), str(self._n), op, level, inputs, out, bytes_in,
                             self.p.ciphertext_bytes(out_level, out_polys), keys, plaintext, pt_bytes, None, self.phase))
        self._n += 1
        self.level[out] = out_level
        self.polys[out] = out_polys
        return out

    def add(self, a: str, b: str) -> str:
        lv = self.level[a]
        if self.level[b] != lv:
            b = self.mod_switch_to(b, lv)
        return self._emit("add", (a, b), level=lv, out_level=lv, out_polys=max(self.polys[a], self.polys[b]))

    def add_plain(self, a: str, pt: str) -> str:
        lv = self.level[a]
        return self._emit("add_plain", (a,), level=lv, out_level=lv, out_polys=self.polys[a],
                          plaintext=pt, pt_bytes=self.p.plaintext_bytes(lv))

    def mul_plain(self, a: str, pt: str) -> str:
        lv = self.level[a]
        return self._emit("mul_plain", (a,), level=lv, out_level=lv, out_polys=self.polys[a],
                          plaintext=pt, pt_bytes=self.p.plaintext_bytes(lv))

    def mul(self, a: str, b: str) -> str:
        lv = self.level[a]
        return self._emit("mul", (a, b), level=lv, out_level=lv, out_polys=3)

    def relinearize(self, a: str) -> str:
        lv = self.level[a]
        return self._emit("relinearize", (a,), level=lv, out_level=lv, keys=("relin",))

    def rotate(self, a: str, step: int) -> str:
        lv = self.level[a]
        return self._emit("rotate", (a,), level=lv, out_level=lv, keys=(f"galois:{step}",))

    def rescale(self, a: str) -> str:
        lv = self.level[a]
        if lv == 0:
            raise ConfigError("the program needs more levels than the parameters provide")
        return self._emit("rescale", (a,), level=lv, out_level=lv - 1, out_polys=self.polys[a])

    def mod_switch_to(self, a: str, level: int) -> str:
        while self.level[a] > level:
            lv = self.level[a]
            a = self._emit("mod_switch", (a,), level=lv, out_level=lv - 1, out_polys=self.polys[a])
        return a


__all__ = ["ProgramBuilder"]
