"""HE programs: an encrypted inference as a list of CKKS ops with the bytes each one touches.

Why a program and not just totals: Suzuki and Yamana (in-storage computing for HE) ask where an
FPGA should get its data from when weights and keys do not fit in its DRAM, and the answer
depends on *when* each byte is needed relative to the computation (HE is data-oblivious, so the
order of every read is known before the run and transfers can be prefetched). So a program is
the op sequence, in program order, with for every op its level, the ciphertexts it reads and
writes, the stored plaintext (a weight) and the evaluation keys it needs, and their sizes.

Sizes follow the RNS representation (SEAL/EVA, CKKS): at level ``l`` a value has ``l + 1``
RNS limbs, each limb is ``N`` coefficient words of 8 bytes, so a ciphertext of ``p``
polynomials (2, or 3 after a ciphertext-ciphertext multiply) is ``p * N * (l + 1) * 8``
bytes and a plaintext ``N * (l + 1) * 8``. A key-switching key (relinearisation or one
Galois key per rotation step) is, as in SEAL, one RLWE pair over all primes (data and special)
per data prime: ``L * 2 * (L + 1) * N * 8`` bytes for ``L`` data primes.

This module holds the program and its analysis; its sources are modules of their own (the
one-name choice among them is :mod:`.he_models`):

(a) :func:`.he_trace.load_trace` -- a JSON trace recorded from a real encrypted inference
    (schema ``cryptoffload-he-trace/1``, documented in ``docs/studies/isc-he-cnn.md``);
(b) :func:`.he_cnn_generated.generate_cnn` -- the paper's CNN shape (MNIST, conv + square +
    FC + square + FC) with per-channel packing, sizes computed from the ring parameters
    (with :class:`.he_program_builder.ProgramBuilder`, as the next two);
(c) :func:`.he_cnn_fitted.paper_calibrated_program` -- a program built from
    ``profiles/he_cnn_paper.toml`` that reproduces the paper's inputs (weights 3.3 GB, keys
    0.5 GB, about 17 GB touched, 1.05 s of FPGA compute) when the real trace differs from the
    paper's EVA program; and :func:`.he_cnn_eva.paper_inputs_program`, the paper's stated inputs.

Placement conventions (the paper's): a program input (the client's encrypted image) is in
device DRAM when the run starts; weights (plaintexts) and keys start in storage (NAND, SSD or
host memory) and are fetched; intermediate ciphertexts are produced in device DRAM; an item
is *dead* after its last reader and may be evicted. ``encode``/``encrypt``/``decrypt`` are
host-side (weight encoding is pre-computable, the client encrypts and decrypts): they are
accepted in a trace but not executed on the device; an ``encode`` output is a stored weight.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NotRequired, TypedDict

from cryptoffload.checks import JsonDict
from cryptoffload.crypto.ckks.params import CkksParams
from cryptoffload.crypto.ckks.trace import TRACE_SCHEMA
from cryptoffload.errors import ConfigError
from cryptoffload.io import atomic_write

SCHEMA = TRACE_SCHEMA

DEVICE_OPS = ("add", "sub", "negate", "add_plain", "sub_plain", "mul", "mul_plain", "rescale",
              "mod_switch", "relinearize", "rotate",
              # bootstrapping's (crypto/ckks/bootstrap/): constants, conjugation, the mod-raise
              "mul_const", "add_const", "conjugate", "mod_raise")
HOST_OPS = ("encode", "encrypt", "decrypt")
OPS = DEVICE_OPS + HOST_OPS
PLAIN_OPS = ("add_plain", "sub_plain", "mul_plain")
KEYED_OPS = ("relinearize", "rotate", "conjugate", "mod_raise")

# Item kinds: where a byte lives when the run starts.
INPUT, PLAINTEXT, KEY, CIPHERTEXT = "input", "plaintext", "key", "ciphertext"
FETCHED_KINDS = (PLAINTEXT, KEY)

OpTime = Callable[["HEOp", CkksParams], float]


class ProgramSummary(TypedDict):
    """What :meth:`HEProgram.summary` says about a program: its size, ops and bytes (and its
    compute time under a cost model, its measured wall time when the trace has one)."""

    name: str
    source: str
    params: JsonDict
    ops: int
    device_ops: int
    op_counts: dict[str, int]
    weight_bytes: int
    key_bytes: int
    keys: int
    input_bytes: int
    touched_bytes: int
    min_dram_bytes: int
    compute_s: NotRequired[float]
    measured_wall_s: NotRequired[float]

@dataclass(frozen=True, slots=True)
class HEOp:
    """One op. ``level`` is the level of the op's ciphertext input(s) (limbs = level + 1)."""

    index: int
    id: str
    op: str
    level: int
    inputs: tuple[str, ...]
    output: str
    bytes_in: int
    bytes_out: int
    keys: tuple[str, ...] = ()
    plaintext: str | None = None
    plaintext_bytes: int = 0
    wall_s: float | None = None
    phase: str = ""

    @property
    def on_device(self) -> bool:
        return self.op in DEVICE_OPS


@dataclass(slots=True)
class DataItem:
    """A ciphertext, plaintext or key: its size, where it starts, and its first and last reader
    (indices into the program's ops; a program output has ``last_use = None``: never evicted)."""

    name: str
    nbytes: int
    kind: str
    producer: int | None = None
    first_use: int | None = None
    last_use: int | None = None
    output: bool = False

    @property
    def fetched(self) -> bool:
        return self.kind in FETCHED_KINDS


@dataclass
class HEProgram:
    """Ops in program order plus the data items they touch (built by :meth:`analyse`)."""

    name: str
    source: str  # "trace", "generated" or "paper-calibrated"
    params: CkksParams
    ops: list[HEOp]
    key_bytes: dict[str, int] = field(default_factory=dict)
    input_bytes: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    items: dict[str, DataItem] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.ops:
            raise ConfigError(f"program {self.name!r} has no ops")
        self.analyse()

    # -- analysis ------------------------------------------------------------------------------
    def analyse(self) -> None:
        """Resolve every operand to an item and record first and last device readers."""
        items: dict[str, DataItem] = {}

        def use(name: str, i: int) -> None:
            it = items[name]
            if it.first_use is None:
                it.first_use = i
            it.last_use = i

        for op in self.ops:
            i = op.index
            if op.op == "encode":
                items[op.output] = DataItem(op.output, op.bytes_out, PLAINTEXT)
                continue
            if op.op == "encrypt":
                items[op.output] = DataItem(op.output, op.bytes_out, INPUT)
                continue
            if op.op == "decrypt":
                for name in op.inputs:
                    if name in items:
                        items[name].output = True
                continue
            unknown = [n for n in op.inputs if n not in items]
            known = sum(items[n].nbytes for n in op.inputs if n in items)
            for n in unknown:  # a program input: in device DRAM at the start
                size = self.input_bytes.get(n)
                if size is None:
                    size = max(1, (op.bytes_in - known) // len(unknown))
                items[n] = DataItem(n, int(size), INPUT)
            for n in op.inputs:
                use(n, i)
            if op.plaintext is not None:
                if op.plaintext not in items:
                    items[op.plaintext] = DataItem(op.plaintext, op.plaintext_bytes, PLAINTEXT)
                elif items[op.plaintext].kind not in (PLAINTEXT, INPUT, CIPHERTEXT):
                    raise ConfigError(f"op #{i} ({op.op}): plaintext {op.plaintext!r} names a key")
                use(op.plaintext, i)
            for k in op.keys:
                if k not in items:
                    items[k] = DataItem(k, int(self.key_bytes.get(k, self.params.ksk_bytes)), KEY)
                elif items[k].kind != KEY:
                    raise ConfigError(f"op #{i} ({op.op}): key {k!r} is also the name of a ciphertext or plaintext")
                use(k, i)
            if op.output in items:
                raise ConfigError(f"op #{i} ({op.op}): output {op.output!r} is written twice; "
                                  "a trace must be in SSA form (one writer per value)")
            items[op.output] = DataItem(op.output, op.bytes_out, CIPHERTEXT, producer=i)
        for it in items.values():
            if it.kind == CIPHERTEXT and it.last_use is None:
                it.output = True  # never read on the device: the result, kept in DRAM
            if it.output:
                it.last_use = None
        self.items = items

    @property
    def device_ops(self) -> list[HEOp]:
        return [op for op in self.ops if op.on_device]

    def op_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for op in self.ops:
            out[op.op] = out.get(op.op, 0) + 1
        return out

    def bytes_of(self, kind: str, used_only: bool = True) -> int:
        return sum(it.nbytes for it in self.items.values()
                   if it.kind == kind and (not used_only or it.first_use is not None or kind == CIPHERTEXT))

    @property
    def weight_bytes(self) -> int:
        return self.bytes_of(PLAINTEXT)

    @property
    def key_total_bytes(self) -> int:
        return self.bytes_of(KEY)

    @property
    def fetched_bytes(self) -> int:
        return self.weight_bytes + self.key_total_bytes

    @property
    def touched_bytes(self) -> int:
        """Every byte the run holds at some time: inputs, weights, keys and every produced value."""
        return sum(it.nbytes for it in self.items.values()
                   if it.kind == CIPHERTEXT or it.first_use is not None)

    def compute_s(self, op_time: OpTime) -> float:
        return math.fsum(op_time(op, self.params) for op in self.ops if op.on_device)

    def measured_wall_s(self) -> float | None:
        """Sum of the recorded wall times when every device op has one (a measured CPU run)."""
        walls = [op.wall_s for op in self.ops if op.on_device]
        known = [w for w in walls if w is not None]
        if not walls or len(known) != len(walls):
            return None
        return math.fsum(known)

    def working_set(self, op: HEOp) -> int:
        """Bytes one op needs in DRAM at once: its operands, plaintext, keys and output."""
        names = set(op.inputs) | set(op.keys) | ({op.plaintext} if op.plaintext else set())
        return sum(self.items[n].nbytes for n in names) + op.bytes_out

    def largest_working_set(self) -> tuple[HEOp, int]:
        return max(((op, self.working_set(op)) for op in self.device_ops), key=lambda t: t[1])

    def live_profile(self) -> list[int]:
        """DRAM bytes live during each device op when nothing is prefetched early: the least
        DRAM that can run the program without spilling (evicting dead data at once)."""
        initial = sum(it.nbytes for it in self.items.values() if it.kind == INPUT and it.first_use is not None)
        frees: dict[int, int] = {}
        for it in self.items.values():
            if it.last_use is not None and (it.first_use is not None or it.producer is not None):
                frees[it.last_use] = frees.get(it.last_use, 0) + it.nbytes
        live = initial
        out = []
        for op in self.device_ops:
            i = op.index
            alloc = sum(self.items[n].nbytes for n in _fetched_first(self, op)) + op.bytes_out
            live += alloc
            out.append(live)
            live -= frees.get(i, 0)
        return out

    def summary(self, op_time: OpTime | None = None) -> ProgramSummary:
        out: ProgramSummary = {
            "name": self.name, "source": self.source, "params": self.params.to_dict(),
            "ops": len(self.ops), "device_ops": len(self.device_ops), "op_counts": self.op_counts(),
            "weight_bytes": self.weight_bytes, "key_bytes": self.key_total_bytes,
            "keys": sum(1 for it in self.items.values() if it.kind == KEY and it.first_use is not None),
            "input_bytes": self.bytes_of(INPUT), "touched_bytes": self.touched_bytes,
            "min_dram_bytes": max(self.live_profile()),
        }
        if op_time is not None:
            out["compute_s"] = self.compute_s(op_time)
        wall = self.measured_wall_s()
        if wall is not None:
            out["measured_wall_s"] = wall
        return out

    # -- export ---------------------------------------------------------------------------------
    def to_trace(self) -> JsonDict:
        ops = []
        for op in self.ops:
            d: JsonDict = {"id": op.id, "op": op.op, "level": op.level, "inputs": list(op.inputs),
                                 "output": op.output, "bytes_in": op.bytes_in, "bytes_out": op.bytes_out}
            if op.keys:
                d["keys"] = list(op.keys)
            if op.plaintext is not None:
                d["plaintext"] = op.plaintext
                d["plaintext_bytes"] = op.plaintext_bytes
            if op.wall_s is not None:
                d["wall_s"] = op.wall_s
            if op.phase:
                d["phase"] = op.phase
            ops.append(d)
        out: JsonDict = {"schema": SCHEMA, "name": self.name, "params": self.params.to_dict(), "ops": ops}
        if self.key_bytes:
            out["key_bytes"] = dict(self.key_bytes)
        if self.input_bytes:
            out["input_bytes"] = dict(self.input_bytes)
        return out

    def save_trace(self, path: str | os.PathLike[str]) -> Path:
        return atomic_write(path, json.dumps(self.to_trace()))


def _fetched_first(program: HEProgram, op: HEOp) -> list[str]:
    """Names of the stored items (weights, keys) whose first reader is ``op``."""
    names = list(op.keys) + ([op.plaintext] if op.plaintext else [])
    return [n for n in names if program.items[n].fetched and program.items[n].first_use == op.index]


def fetched_first(program: HEProgram, op: HEOp) -> list[str]:
    return _fetched_first(program, op)


__all__ = [
    "CIPHERTEXT", "DEVICE_OPS", "FETCHED_KINDS", "HOST_OPS", "INPUT", "KEY", "KEYED_OPS", "OPS", "PLAINTEXT",
    "PLAIN_OPS", "SCHEMA", "DataItem", "HEOp", "HEProgram", "OpTime", "ProgramSummary", "fetched_first",
]
