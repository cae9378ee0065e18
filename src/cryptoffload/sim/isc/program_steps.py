"""An HE program compiled into the steps an in-storage platform executes: per op (or merged
ops) its compute time, the stored bytes it reads first, what it allocates and frees in DRAM;
the DRAM check, and the prefetch gates that keep DRAM from overflowing.

Why apart from the devices: the steps depend only on the program and the FPGA's op costs,
not on where the bytes come from; every platform (host memory, SSD, NAND on the board) and
the planner run the same compiled program, and its totals (compute, fetched bytes, least
DRAM) are exact whatever the merging.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from cryptoffload.errors import ConfigError
from cryptoffload.sim.isc.fpga_cost import FpgaCostModel
from cryptoffload.workloads.he_program import CIPHERTEXT, INPUT, HEOp, HEProgram, fetched_first


@dataclass(frozen=True, slots=True)
class Step:
    """Consecutive device ops executed as one job: their compute, the stored bytes they read
    first, what they allocate in DRAM (those bytes plus their outputs) and what dies with them."""

    first_op: int
    last_op: int
    compute_s: float
    fetch_bytes: float
    out_bytes: float
    free_bytes: float

    @property
    def alloc_bytes(self) -> float:
        return self.fetch_bytes + self.out_bytes


@dataclass
class CompiledProgram:
    """A program's steps and its exact totals (compute, fetched bytes, least DRAM, the op with
    the largest working set and the op at the live-data peak)."""

    name: str
    steps: list[Step]
    initial_bytes: float  # program inputs, in DRAM when the run starts
    kept_bytes: float  # program outputs and inputs never evicted
    compute_s: float
    fetched_bytes: float
    min_dram_bytes: float  # peak live data with no prefetching (exact, per op)
    largest_op: HEOp
    largest_working_set: float
    peak_op: HEOp


def compile_steps(program: HEProgram, cost: FpgaCostModel, max_step_s: float | None = None,
                  max_step_bytes: float | None = None) -> CompiledProgram:
    """Per-op steps, merged while a step stays under ``max_step_s`` of compute and
    ``max_step_bytes`` of fetched data (``None``: no merging, one op per step).

    Merging only coarsens *when* data is waited for and freed (a merged step waits for all of
    its data, allocates at its start and frees at its end); totals are exact.
    """
    items = program.items
    frees: dict[int, float] = {}
    for it in items.values():
        if it.last_use is not None and (it.first_use is not None or it.producer is not None):
            frees[it.last_use] = frees.get(it.last_use, 0.0) + it.nbytes
    initial = float(sum(it.nbytes for it in items.values() if it.kind == INPUT and it.first_use is not None))
    raw: list[Step] = []
    live = initial
    peak, peak_op = -1.0, None
    for op in program.ops:
        if not op.on_device:
            continue
        fetch = float(sum(items[n].nbytes for n in fetched_first(program, op)))
        out = float(op.bytes_out if items[op.output].kind == CIPHERTEXT else 0)
        free = frees.get(op.index, 0.0)
        t = cost.op_time(op, program.params)
        live += fetch + out
        if live > peak:
            peak, peak_op = live, op
        live -= free
        raw.append(Step(op.index, op.index, t, fetch, out, free))
    kept = live
    largest_op, largest_ws = program.largest_working_set()
    steps = raw if max_step_s is None and max_step_bytes is None else _merge(raw, max_step_s, max_step_bytes)
    assert peak_op is not None, "largest_working_set() refuses a program without device ops"
    return CompiledProgram(program.name, steps, initial, kept, math.fsum(s.compute_s for s in raw),
                           math.fsum(s.fetch_bytes for s in raw), peak, largest_op, float(largest_ws), peak_op)


def _merge(raw: list[Step], max_s: float | None, max_b: float | None) -> list[Step]:
    max_s = math.inf if max_s is None else max_s
    max_b = math.inf if max_b is None else max_b
    out: list[Step] = []
    cur: list[Step] = []
    cs = cb = 0.0
    for s in raw:
        if cur and (cs + s.compute_s > max_s or cb + s.fetch_bytes > max_b):
            out.append(_join(cur))
            cur, cs, cb = [], 0.0, 0.0
        cur.append(s)
        cs += s.compute_s
        cb += s.fetch_bytes
    if cur:
        out.append(_join(cur))
    return out


def _join(steps: list[Step]) -> Step:
    return Step(steps[0].first_op, steps[-1].last_op, math.fsum(s.compute_s for s in steps),
                math.fsum(s.fetch_bytes for s in steps), math.fsum(s.out_bytes for s in steps),
                math.fsum(s.free_bytes for s in steps))


def check_fits(compiled: CompiledProgram, program: HEProgram, dram_bytes: float, where: str) -> None:
    """Refuse a platform whose DRAM cannot hold the largest op's working set, or the program's
    live data (spilling to NAND is future work in the paper and is not modelled)."""
    op = compiled.largest_op
    if compiled.largest_working_set > dram_bytes:
        raise ConfigError(
            f"{where}: DRAM of {dram_bytes / 1e9:.3g} GB cannot hold the working set of op #{op.index} "
            f"(id {op.id}, {op.op} at level {op.level}): {compiled.largest_working_set / 1e9:.3g} GB of "
            f"operands, plaintext, keys and output in program {program.name!r}")
    if compiled.min_dram_bytes > dram_bytes:
        p = compiled.peak_op
        raise ConfigError(
            f"{where}: DRAM of {dram_bytes / 1e9:.3g} GB cannot hold the live data of program {program.name!r} "
            f"at op #{p.index} (id {p.id}, {p.op}): {compiled.min_dram_bytes / 1e9:.3g} GB even when dead data "
            "is evicted at once; spilling to NAND is not modelled")


def prefetch_gates(compiled: CompiledProgram, dram_bytes: float) -> list[int]:
    """For each step ``m``, the step the FPGA must have finished before ``m``'s data may be
    fetched (-1: at once) so that DRAM never overflows, whatever happens later.

    While the FPGA runs step ``i``, DRAM holds ``L_i`` (what a run without prefetching holds:
    live intermediates, inputs, data of steps up to ``i`` still to be read, step ``i``'s
    outputs) plus the data prefetched for steps ``i+1..m``, ``S_m - S_i`` (``S`` = prefix sums
    of fetched bytes). Fetching ``m`` is safe once every step ``i <= m`` still to run has
    ``L_i - S_i <= C - S_m``; the gate is the last step violating that (found with a
    monotonic stack of the running maxima of ``L_i - S_i``). With ``C >= max L_i`` (checked by
    :func:`check_fits`) the gate is always before ``m``: data may always come one step ahead.
    """
    gates: list[int] = []
    stack_idx: list[int] = []
    stack_neg: list[float] = []  # -G along the stack (increasing), for bisect
    live = compiled.initial_bytes
    s_prefix = 0.0
    for m, st in enumerate(compiled.steps):
        s_prefix += st.fetch_bytes
        L = live + st.fetch_bytes + st.out_bytes
        live = L - st.free_bytes
        g = L - s_prefix
        while stack_idx and -stack_neg[-1] <= g:
            stack_idx.pop()
            stack_neg.pop()
        stack_idx.append(m)
        stack_neg.append(-g)
        limit = dram_bytes * (1 + 1e-12) - s_prefix
        # entries with G > limit form a prefix of the stack; the gate is the last of them
        cnt = bisect.bisect_left(stack_neg, -limit)
        gates.append(stack_idx[cnt - 1] if cnt else -1)
    return gates


__all__ = ["CompiledProgram", "Step", "check_fits", "compile_steps", "prefetch_gates"]
