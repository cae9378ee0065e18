"""Choose the BSGS split and baby-step size for N devices from a cost profile.

Why search the DAG and not solve the closed form: Ha, Jung and Paek (multi-device bootstrapping)
pick ``bs`` per ``N`` from ``T_bs + C/(N T_bs) + T_comm log2 N``, which ignores the plaintext
products (they do not shrink with ``bs``), the partial last giant step, uneven giant blocks when
``N`` does not divide ``gs``, the order in which a reduction tree's transfers can start, and
every strategy but replicated baby steps. The DAG (``workloads/bsgs.py``) scheduled on devices
and links (``sim/op_dag.py``) has all of that, so both searches here price configurations on it:

* :func:`exhaustive` -- every ``(strategy, bs)`` in the space, exact: a configuration is
  skipped only when a lower bound on its time (the baby-step rotations one device must do, or
  the baby steps one device must receive) already exceeds the best time found, and those
  bounds grow with ``bs``;
* :func:`tune` -- the fast path a planner calls: only the "frontier" of ``bs`` values (for each
  number of giant steps per device, the smallest ``bs`` that gets there -- the cost jumps where
  that number changes, so the optima sit there), the closed-form optimum of each strategy and
  the powers of two, then the neighbours of the best. Its choice is checked against
  :func:`exhaustive` (tests and the study print the gap).

``space`` is ``"all"`` (every ``1 <= bs <= C``), ``"pow2"`` (powers of two, as ``bs x gs = C``
forces when ``C`` is a power of two -- the seed's model) or ``"divisors"`` (``bs`` divides ``C``).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

from cryptoffload.errors import ConfigError
from cryptoffload.sim.op_dag import DagCosts, Schedule, schedule
from cryptoffload.workloads.bsgs import STRATEGIES, BsgsShape, build_dag, check_positive_int, split

SPACES = ("all", "pow2", "divisors")


@dataclass(frozen=True)
class Config:
    """One evaluated configuration."""

    devices: int
    strategy: str
    baby: int
    giant: int
    predicted_s: float
    rotations_per_device: int     # most rotations any device does
    transfers: int
    bytes_moved: float

    def describe(self) -> str:
        return (f"N={self.devices}: {self.strategy}, bs={self.baby}, gs={self.giant}: "
                f"{self.predicted_s * 1e3:.4g} ms predicted")


def baby_space(diagonals: int, space: str = "all") -> list[int]:
    """Candidate baby-step sizes for ``diagonals`` diagonals."""
    check_positive_int("the number of diagonals C", diagonals)
    if space == "all":
        return list(range(1, diagonals + 1))
    if space == "pow2":
        return [1 << k for k in range(diagonals.bit_length()) if (1 << k) <= diagonals]
    if space == "divisors":
        return [b for b in range(1, diagonals + 1) if diagonals % b == 0]
    raise ConfigError(f"unknown baby-step space {space!r} (known: {', '.join(SPACES)})")


def _check_strategies(strategies: Iterable[str]) -> tuple[str, ...]:
    out = tuple(strategies)
    for s in out:
        if s not in STRATEGIES:
            raise ConfigError(f"unknown BSGS strategy {s!r} (known: {', '.join(STRATEGIES)})")
    if not out:
        raise ConfigError("no BSGS strategy to search")
    return out


def evaluate(base: BsgsShape, devices: int, strategy: str, baby: int, costs: DagCosts, *,
             hoisted: bool = False, batched_sends: bool = False) -> tuple[Config, Schedule]:
    """Price one configuration: ``base`` with its baby-step size replaced by ``baby``
    (``batched_sends``: as the Dask execution sends baby steps, see ``build_dag``)."""
    check_positive_int("the number of devices N", devices)
    shape = replace(base, baby=baby)
    dag = build_dag(split(shape, devices, strategy), hoisted_babies=hoisted, granularity="chain",
                    batched_sends=batched_sends)
    sch = schedule(dag, costs)
    rot = max(c["rotate"] + c["hoisted_rotate"] for c in (dag.counts(d) for d in range(devices)))
    return Config(devices, strategy, baby, shape.giant, sch.makespan, rot, sch.transfers,
                  sch.bytes_moved), sch


def _lower_bound(base: BsgsShape, devices: int, strategy: str, baby: int, costs: DagCosts,
                 hoisted: bool) -> float:
    """A time no configuration with this ``bs`` (or a larger one) can beat."""
    top = base.level
    rot = costs.op_s("rotate", top, top)
    extra = costs.op_s("hoisted_rotate" if hoisted else "rotate", top, top)
    rotations = 0.0 if baby <= 1 else rot + (baby - 2) * extra     # all baby steps, one device
    if devices == 1 or strategy == "replicate":
        return rotations
    wire = costs.wire_s(top, top)
    if strategy == "broadcast":
        own = -(-(baby - 1) // devices)
        return max(rotations / devices, ((baby - 1) - own) * wire)
    giant = -(-base.diagonals // baby)
    return max(rotations, (baby - 1) * wire if giant >= 2 else 0.0)


def exhaustive(base: BsgsShape, devices: int, costs: DagCosts, *,
               strategies: Sequence[str] = STRATEGIES, space: str = "all",
               hoisted: bool = False) -> list[Config]:
    """Every configuration that could be best, cheapest first (exact; see the module doc)."""
    strategies = _check_strategies(strategies)
    candidates = baby_space(base.diagonals, space)
    best = math.inf
    out: list[Config] = []
    for strategy in strategies if devices > 1 else strategies[:1]:
        for bs in candidates:           # ascending: the bounds grow with bs
            if _lower_bound(base, devices, strategy, bs, costs, hoisted) > best:
                break
            cfg, _ = evaluate(base, devices, strategy, bs, costs, hoisted=hoisted)
            out.append(cfg)
            best = min(best, cfg.predicted_s)
    out.sort(key=lambda c: (c.predicted_s, c.baby, STRATEGIES.index(c.strategy)))
    return out


def _seeds(base: BsgsShape, devices: int, strategy: str, costs: DagCosts, space: list[int]) -> set[int]:
    """Closed-form optima (continuous) of each strategy, snapped to the space, plus the powers
    of two: where the search starts."""
    top = base.level
    c = base.diagonals
    r_top = costs.op_s("rotate", top, top)
    r_low = costs.op_s("rotate", top - 1, top)
    wire = costs.wire_s(top, top) + costs.serialize_s + costs.deserialize_s
    if strategy == "replicate" or devices == 1:
        per_baby = r_top
    elif strategy == "broadcast":
        per_baby = r_top / devices + wire * (devices - 1) / devices
    else:
        per_baby = r_top + wire
    x = math.sqrt(c * r_low / (devices * per_baby)) if per_baby > 0 else float(c)
    targets = {x, math.sqrt(c / devices), math.sqrt(c)}
    seeds = set()
    for t in targets:
        i = min(range(len(space)), key=lambda k: abs(space[k] - t))
        seeds.update(space[max(0, i - 1): i + 2])
    seeds.update(b for b in space if b & (b - 1) == 0)
    return seeds


def frontier(diagonals: int, devices: int, candidates: Sequence[int]) -> list[int]:
    """For each number ``g`` of giant steps per device, the smallest ``bs`` (in the space) that
    needs no more than ``g``: a larger ``bs`` with the same ``g`` only adds baby steps. The
    DAG cost jumps where ``ceil(ceil(C/bs)/N)`` changes, so these are where optima sit."""
    out = set()
    for g in range(1, -(-diagonals // devices) + 1):
        want = -(-diagonals // (g * devices))
        pos = bisect.bisect_left(candidates, want)
        if pos < len(candidates):
            out.add(candidates[pos])
        if want == 1:
            break
    return sorted(out)


def tune(base: BsgsShape, devices: int, costs: DagCosts, *, strategies: Sequence[str] = STRATEGIES,
         space: str = "all", hoisted: bool = False) -> Config:
    """The configuration a planner should use for ``devices`` devices (fast; not exhaustive):
    the giant-block frontier, the closed-form seeds and the powers of two (for ``broadcast``
    also every ``bs`` whose baby steps split evenly), cheapest lower bound first (pruned like
    :func:`exhaustive`), then the neighbours of the best."""
    check_positive_int("the number of devices N", devices)
    strategies = _check_strategies(strategies)
    candidates = baby_space(base.diagonals, space)
    index = {b: k for k, b in enumerate(candidates)}
    best: Config | None = None
    for strategy in strategies if devices > 1 else strategies[:1]:
        pool = set(frontier(base.diagonals, devices, candidates)) | _seeds(base, devices, strategy, costs, candidates)
        if strategy == "broadcast":     # baby steps split evenly: bs - 1 a multiple of N
            pool |= {b for b in candidates if (b - 1) % devices == 0}
        bounded = sorted((_lower_bound(base, devices, strategy, b, costs, hoisted), b) for b in pool)
        tried: dict[int, Config] = {}
        for lb, bs in bounded:
            if best is not None and lb > best.predicted_s:
                break
            cfg = evaluate(base, devices, strategy, bs, costs, hoisted=hoisted)[0]
            tried[bs] = cfg
            if best is None or cfg.predicted_s < best.predicted_s:
                best = cfg
        for cfg in sorted(tried.values(), key=lambda c: c.predicted_s)[:3]:   # polish
            k = index[cfg.baby]
            for nk in (k - 2, k - 1, k + 1, k + 2):
                if 0 <= nk < len(candidates) and candidates[nk] not in tried:
                    c2 = evaluate(base, devices, strategy, candidates[nk], costs, hoisted=hoisted)[0]
                    tried[c2.baby] = c2
                    if best is None or c2.predicted_s < best.predicted_s:
                        best = c2
    assert best is not None
    return best


def naive(base: BsgsShape, devices: int, costs: DagCosts, *, baby: int | None = None,
          space: str = "all", hoisted: bool = False) -> Config:
    """Ha, Jung and Paek's baseline: the single-device configuration (``baby``, or the best for
    one device) kept on ``devices`` devices with replicated baby steps."""
    if baby is None:
        baby = exhaustive(base, 1, costs, strategies=("replicate",), space=space, hoisted=hoisted)[0].baby
    if not 1 <= baby <= base.diagonals:
        raise ConfigError(f"the baby-step size bs must be between 1 and C = {base.diagonals}, got {baby}")
    return evaluate(base, devices, "replicate", baby, costs, hoisted=hoisted)[0]


def tune_up_to(base: BsgsShape, max_devices: int, costs: DagCosts, *,
               strategies: Sequence[str] = STRATEGIES, space: str = "all", hoisted: bool = False) -> Config:
    """Like :func:`tune`, but free to leave devices idle: a small product (a sparse bootstrapping
    stage) can lose more to the reduction tree than it gains from more devices. Tries
    ``1, 2, 4, ...`` devices and ``max_devices``; the result's ``devices`` is the count used."""
    check_positive_int("the number of devices N", max_devices)
    counts = sorted({1 << k for k in range(max_devices.bit_length()) if (1 << k) <= max_devices} | {max_devices})
    return min((tune(base, n, costs, strategies=strategies, space=space, hoisted=hoisted) for n in counts),
               key=lambda c: (c.predicted_s, c.devices))
