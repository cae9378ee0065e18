"""Storage-side devices for the in-storage computing study (Suzuki and Yamana): an FPGA that
runs CKKS ops, its DRAM, NAND flash, SSDs, and a program compiled into steps they execute.

Why these pieces: the paper compares three ways of feeding an FPGA with CKKS weights and keys
that do not fit in its DRAM -- from host memory, from an SSD through the host, or from NAND
flash on the same board (a computational storage device). What differs is only the path the
bytes take and which links are shared, so the model is: an FPGA (:class:`~.devices.Device`,
one op at a time, op times from :class:`FpgaCostModel`), a :class:`DeviceDRAM` with a
capacity from which dead data is evicted at once, and links (:class:`~.links.Link`, exact
processor sharing) for NAND, SSD and PCIe lanes. :func:`compile_steps` turns a program into
the steps the simulation executes; ``sim/isc_platform.py`` wires them into platforms.

Every byte that leaves storage is counted once; intermediate ciphertexts never leave DRAM.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import simpy

from cryptoffload.crypto.ckks.params import CkksParams
from cryptoffload.errors import ConfigError
from cryptoffload.profiles import load_profile
from cryptoffload.sim.core import ProcessGenerator, Simulation, check_name, check_non_negative, check_positive
from cryptoffload.sim.links import SharedLink
from cryptoffload.workloads.he_program import CIPHERTEXT, INPUT, HEOp, HEProgram, fetched_first

FPGA_PROFILE = "heax_set_c"
COST_FIELDS = ("ring.poly_modulus_degree", "ring.data_limbs", "ops.hadd_level0_s", "ops.hmult_top_s",
               "ops.keyswitch_s", "ops.ntt_limb_s", "ops.plain_factor", "ops.mod_switch_factor")


# --------------------------------------------------------------------------------------------
# FPGA op costs


@dataclass(frozen=True)
class FpgaCostModel:
    """Seconds per CKKS op on the FPGA, derived per level as Suzuki and Yamana do from HEAX Set-C.

    * add/sub/negate: ``hadd_level0_s`` at level 0 (one limb), times the number of limbs;
      ``add_plain``/``sub_plain`` touch one polynomial instead of two (``plain_factor``).
    * mul (ciphertext x ciphertext, before relinearisation): ``hmult_top_s`` (= 1 / HEAX
      throughput) at the top level, scaled by limbs; ``mul_plain`` times ``plain_factor``
      (two dyadic products instead of four, SEAL 3.6).
    * relinearize/rotate: ``keyswitch_s``, constant over levels (HEAX's key switching is bound
      by its second INTT stage, whose count does not depend on the input's level).
    * rescale: per polynomial one INTT of the dropped limb and one NTT per remaining limb:
      ``2 * limbs * ntt_limb_s``. mod_switch drops a limb without transforms:
      ``mod_switch_factor`` of an add.
    * encode/encrypt/decrypt: host-side, zero on the device.

    For a ring other than the reference one, element-wise ops scale with ``N`` and key
    switching with ``N * (L / L_ref)**2`` (its work is ``~L * (L + 1)`` limb transforms).
    """

    ref_n: int
    ref_limbs: int
    hadd_level0_s: float
    hmult_top_s: float
    keyswitch_s: float
    ntt_limb_s: float
    plain_factor: float = 0.5
    mod_switch_factor: float = 0.5
    profile: str = ""
    kind: str = "derived"

    def __post_init__(self) -> None:
        for f in ("hadd_level0_s", "hmult_top_s", "keyswitch_s", "ntt_limb_s", "plain_factor", "mod_switch_factor"):
            check_non_negative(f, getattr(self, f))
        if self.ref_n < 1 or self.ref_limbs < 1:
            raise ConfigError("the cost model's reference ring must have N >= 1 and at least one limb")

    @classmethod
    def from_profile(cls, name: str = FPGA_PROFILE) -> FpgaCostModel:
        prof = load_profile(name, required=COST_FIELDS)
        v = prof.value
        return cls(int(v("ring.poly_modulus_degree")), int(v("ring.data_limbs")), v("ops.hadd_level0_s"),
                   v("ops.hmult_top_s"), v("ops.keyswitch_s"), v("ops.ntt_limb_s"), v("ops.plain_factor"),
                   v("ops.mod_switch_factor"), prof.path, prof.kind)

    @classmethod
    def uniform(cls, seconds: float) -> FpgaCostModel:
        """Every device op takes ``seconds`` at any level (tests, closed forms)."""
        return _UniformCost(1, 1, seconds, seconds, seconds, seconds, 1.0, 1.0, "uniform", "derived")

    def op_time(self, op: HEOp, params: CkksParams) -> float:
        name = op.op
        if name in ("encode", "encrypt", "decrypt"):
            return 0.0
        limbs = op.level + 1
        nscale = params.poly_modulus_degree / self.ref_n
        if name in ("add", "sub", "negate"):
            return self.hadd_level0_s * limbs * nscale
        if name in ("add_plain", "sub_plain"):
            return self.plain_factor * self.hadd_level0_s * limbs * nscale
        if name == "mul":
            return self.hmult_top_s * limbs / self.ref_limbs * nscale
        if name == "mul_plain":
            return self.plain_factor * self.hmult_top_s * limbs / self.ref_limbs * nscale
        if name in ("relinearize", "rotate"):
            return self.keyswitch_s * nscale * (params.data_primes / self.ref_limbs) ** 2
        if name == "rescale":
            return 2 * limbs * self.ntt_limb_s * nscale
        if name == "mod_switch":
            return self.mod_switch_factor * self.hadd_level0_s * limbs * nscale
        raise ConfigError(f"the FPGA cost model has no cost for op {name!r}")

    def __call__(self, op: HEOp, params: CkksParams) -> float:
        return self.op_time(op, params)


class _UniformCost(FpgaCostModel):
    def op_time(self, op: HEOp, params: CkksParams) -> float:
        return 0.0 if op.op in ("encode", "encrypt", "decrypt") else self.hadd_level0_s


# --------------------------------------------------------------------------------------------
# the program as steps


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
    return CompiledProgram(program.name, steps, initial, kept, math.fsum(s.compute_s for s in raw),
                           math.fsum(s.fetch_bytes for s in raw), peak, largest_op, float(largest_ws),
                           peak_op)  # type: ignore[arg-type]


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
    import bisect

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


# --------------------------------------------------------------------------------------------
# DRAM


class DeviceDRAM:
    """Device DRAM: a capacity, FIFO reservations that wait for room, and frees of dead data.

    Utilisation (for the metrics registry) is the time-average fraction of the capacity in use;
    with ``record`` the occupancy is kept as a step function ``(time, bytes)`` for plotting.
    """

    resource_type = "memory"

    def __init__(self, sim: Simulation, name: str, capacity: float, record: bool = False) -> None:
        self.sim = sim
        self.name = check_name(name)
        self.capacity = check_positive("DRAM capacity", capacity)
        self.used = 0.0
        self.peak = 0.0
        self._waiting: list[tuple[float, simpy.Event]] = []
        self._area = 0.0
        self._t = 0.0
        self.record = record
        self.samples: list[tuple[float, float]] = [(0.0, 0.0)] if record else []
        sim.metrics.register(self)

    def _advance(self) -> None:
        now = self.sim.env.now
        self._area += (now - self._t) * self.used
        self._t = now

    def _set(self, used: float) -> None:
        self._advance()
        # rounding of float sums must not leave -1e-9 bytes in use
        self.used = 0.0 if used < 1.0 else used
        self.peak = max(self.peak, self.used)
        if self.record:
            self.samples.append((self.sim.env.now, self.used))

    def hold(self, nbytes: float) -> None:
        """Take ``nbytes`` without waiting (the caller has made sure they fit: prefetch gates)."""
        if nbytes > 0:
            self._set(self.used + nbytes)

    def try_reserve(self, nbytes: float) -> bool:
        if not self._waiting and self.used + nbytes <= self.capacity * (1 + 1e-12):
            self._set(self.used + nbytes)
            return True
        return False

    def reserve(self, nbytes: float) -> ProcessGenerator:
        """Wait (FIFO) until ``nbytes`` fit, then hold them."""
        n = check_non_negative("nbytes", nbytes)
        if n > self.capacity:
            raise ConfigError(f"{self.name}: {n / 1e9:.3g} GB can never fit in {self.capacity / 1e9:.3g} GB")
        return self._reserve(n)

    def _reserve(self, n: float) -> ProcessGenerator:
        if self.try_reserve(n):
            return
        ev = self.sim.env.event()
        self._waiting.append((n, ev))
        yield ev

    def free(self, nbytes: float) -> None:
        if nbytes <= 0:
            return
        if nbytes > self.used * (1 + 1e-9) + 1:
            raise ConfigError(f"{self.name}: freeing {nbytes:.0f} bytes with only {self.used:.0f} in use")
        self._set(max(0.0, self.used - nbytes))
        while self._waiting and self.used + self._waiting[0][0] <= self.capacity * (1 + 1e-12):
            n, ev = self._waiting.pop(0)
            self._set(self.used + n)
            ev.succeed()

    @property
    def busy_time(self) -> float:
        """Byte-seconds over capacity: time-average occupancy times the elapsed time."""
        return (self._area + (self.sim.env.now - self._t) * self.used) / self.capacity

    def utilisation(self, span: float) -> float:
        return self.busy_time / check_positive("span", span)

    def report(self, span: float | None) -> dict[str, Any]:
        return {"type": self.resource_type, "capacity": self.capacity, "peak": self.peak,
                "busy_time": self.busy_time, "utilisation": None if span is None else self.utilisation(span)}


# --------------------------------------------------------------------------------------------
# storage devices (links with a capacity)


class NandFlash(SharedLink):
    """NAND flash on a CSD: sequential read at ``bandwidth`` into the board's DRAM (the data
    is laid out in program order, the paper's section 3), and a capacity for weights and keys."""

    resource_type = "nand"

    def __init__(self, sim: Simulation, name: str, bandwidth: float, capacity: float) -> None:
        super().__init__(sim, name, bandwidth)
        self.capacity = check_positive("NAND capacity", capacity)

    def report(self, span: float | None) -> dict[str, Any]:
        return {**super().report(span), "capacity": self.capacity}


class Ssd(NandFlash):
    """An SSD (or an array of them): read bandwidth and capacity; it reaches an FPGA only
    through host memory, over PCIe lanes modelled as further links."""

    resource_type = "ssd"


def pcie_link(sim: Simulation, name: str, lanes: int, lane_bandwidth: float) -> SharedLink:
    """PCIe lanes as one link: ``lanes * lane_bandwidth``, fairly shared by every transfer on
    it (devices behind one switch, or a group of devices given a pool of lanes)."""
    if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < 1:
        raise ConfigError(f"{name}: lanes must be a positive integer, got {lanes!r}")
    return SharedLink(sim, name, lanes * check_positive("lane bandwidth", lane_bandwidth))


__all__ = ["CompiledProgram", "DeviceDRAM", "FpgaCostModel", "NandFlash", "Ssd", "Step", "check_fits",
           "compile_steps", "pcie_link", "prefetch_gates"]
