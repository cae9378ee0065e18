"""Per-level op costs of a CKKS bootstrap, read from a measured profile, as the BSGS cost model
takes them.

Why per level and not one number per op: a bootstrap's stages run at very different levels --
CoeffToSlot at the top of the modulus chain, SlotToCoeff near the bottom -- and an op's cost
grows with the RNS limbs its ciphertext has. Which level budget is cheapest depends on exactly
that: one more CoeffToSlot level makes every stage sparser but pushes EvalMod one level down
and SlotToCoeff's stages higher. :class:`~cryptoffload.sim.op_dag.DagCosts` prices one product
at one reference level, so :meth:`OpCostTable.dag_costs` hands the tuner a ``DagCosts`` for the
level a stage really runs at.

The profile (``benchmarks/bootstrap_plan.py`` measures one on OpenFHE; a copy of each ring it
measured ships as ``profiles/openfhe_bootstrap_n<N>.toml``) holds, per measured level ``l``
(``l + 1`` RNS limbs) in ``[level.<l>]``, seconds of one op as a bootstrap's stage spends it:

* ``rotate_s`` -- a rotation that is not hoisted: in OpenFHE's stages a Horner giant step
  (ModDown, ModUp, extended-basis rotation);
* ``hoisted_rotate_s`` -- one more rotation of an already decomposed ciphertext (a baby step);
* ``pmul_s``, ``add_s`` -- plaintext product and addition as the stage does them (OpenFHE: in
  the extended basis Q*P);
* ``rescale_s`` -- one rescale (once per stage);
* ``mul_s`` -- ciphertext x ciphertext product with relinearisation and rescale (EvalMod).

Levels between measured ones are interpolated linearly; beyond them a cost is scaled by the
limb count from the nearest measured level. A ring other than the profile's is priced by
scaling every op by ``N log2 N`` (the number-theoretic transforms that dominate) -- a *derived*
cost, and :attr:`OpCostTable.scaled_from` says so.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field, replace
from importlib import resources

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.profiles.loader import Profile, load_profile
from cryptoffload.sim.op_dag import DagCosts

#: the op costs a level must have, in the order :class:`LevelCosts` holds them
OPS = ("rotate_s", "hoisted_rotate_s", "pmul_s", "add_s", "rescale_s", "mul_s")
#: shipped profiles: ``openfhe_bootstrap_n<ring>`` (``benchmarks/bootstrap_plan.py`` writes them)
BUILTIN_PREFIX = "openfhe_bootstrap_n"
WORD_BYTES = 8     # one RNS residue of a coefficient (64-bit words, as OpenFHE and SEAL store them)


@dataclass(frozen=True)
class LevelCosts:
    """Seconds of one op at one level (see the module docstring for what each op is)."""

    rotate_s: float
    hoisted_rotate_s: float
    pmul_s: float
    add_s: float
    rescale_s: float
    mul_s: float

    def scaled(self, factor: float) -> "LevelCosts":
        return LevelCosts(*(getattr(self, op) * factor for op in OPS))


@dataclass(frozen=True)
class OpCostTable:
    """Op costs at measured levels of one ring, and how to reach the others.

    ``name`` and ``provenance`` say where the numbers come from (a profile's name; "measured"
    or "stored"); ``machine`` and ``date`` where and when they were measured; ``scaled_from``
    the ring they were measured at when :meth:`for_ring` scaled them (0: not scaled)."""

    ring_degree: int
    levels: dict[int, LevelCosts]
    name: str = "costs"
    provenance: str = "measured"
    machine: str = ""
    date: str = ""
    scaled_from: int = 0
    _order: tuple[int, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.levels:
            raise ConfigError(f"{self.name}: no level has op costs")
        if any(lv < 0 for lv in self.levels):
            raise ConfigError(f"{self.name}: levels are >= 0, got {sorted(self.levels)}")
        object.__setattr__(self, "_order", tuple(sorted(self.levels)))

    def at(self, level: int) -> LevelCosts:
        """Costs at ``level`` (``level + 1`` limbs): measured, interpolated, or limb-scaled."""
        order = self._order
        if level in self.levels:
            return self.levels[level]
        pos = bisect.bisect_left(order, level)
        if 0 < pos < len(order):
            lo, hi = order[pos - 1], order[pos]
            w = (level - lo) / (hi - lo)
            a, b = self.levels[lo], self.levels[hi]
            return LevelCosts(*((1 - w) * getattr(a, op) + w * getattr(b, op) for op in OPS))
        ref = order[0] if pos == 0 else order[-1]
        return self.levels[ref].scaled((level + 1) / (ref + 1))

    def for_ring(self, ring_degree: int) -> "OpCostTable":
        """The table at ``ring_degree``: itself, or every op scaled by ``N log2 N``."""
        if ring_degree == self.ring_degree:
            return self
        factor = (ring_degree * math.log2(ring_degree)) / (self.ring_degree * math.log2(self.ring_degree))
        return replace(self, ring_degree=ring_degree, levels={lv: c.scaled(factor) for lv, c in self.levels.items()},
                       provenance="derived", scaled_from=self.scaled_from or self.ring_degree)

    def ciphertext_bytes(self, level: int) -> int:
        """Two polynomials of ``level + 1`` limbs of N words."""
        return 2 * self.ring_degree * (level + 1) * WORD_BYTES

    def dag_costs(self, level: int, *, bandwidth_Bps: float, latency_s: float) -> DagCosts:
        """The BSGS cost model's costs for a product whose input is at ``level`` (a bootstrap
        stage rescales once, at the end, so every op of it runs at that level)."""
        c = self.at(level)
        return DagCosts(rotate_s=c.rotate_s, hoisted_rotate_s=c.hoisted_rotate_s, pmul_s=c.pmul_s, add_s=c.add_s,
                        rescale_s=c.rescale_s, bytes=self.ciphertext_bytes(level), bandwidth_Bps=bandwidth_Bps,
                        latency_s=latency_s, name=f"{self.name}@level {level}", kind=self.provenance)

    def describe(self) -> str:
        """One line: what the costs are and where they come from."""
        where = ", ".join(x for x in (self.machine, self.date) if x)
        text = f"{self.name} ({self.provenance}{': ' + where if where else ''})"
        if self.scaled_from:
            text += f", scaled from N = {self.scaled_from} to N = {self.ring_degree} by N log2 N"
        return text


def uniform_costs(ring_degree: int, levels: int, *, rotate_s: float = 1.0, hoisted_rotate_s: float | None = None,
                  pmul_s: float = 1e-9, add_s: float = 1e-9, rescale_s: float = 0.0, mul_s: float = 1.0) -> OpCostTable:
    """The same costs at every level ``0..levels`` (for closed-form checks)."""
    c = LevelCosts(rotate_s, rotate_s if hoisted_rotate_s is None else hoisted_rotate_s, pmul_s, add_s, rescale_s,
                   mul_s)
    return OpCostTable(ring_degree, {lv: c for lv in range(levels + 1)}, name="uniform", provenance="assumed")


def table_from_profile(profile: Profile) -> OpCostTable:
    """Read ``ring.poly_modulus_degree`` and every ``[level.<l>]`` table; a missing op is a
    one-line :class:`ProfileError` naming the file and the field."""
    ring = int(profile.value("ring.poly_modulus_degree"))
    raw = profile.section("level")
    levels: dict[int, LevelCosts] = {}
    for key, ops in raw.items():
        if not key.isdigit():
            raise ProfileError(f"{profile.path}: table 'level.{key}' must be named by a level number (level.5)")
        missing = [op for op in OPS if op not in ops]
        if missing:
            raise ProfileError(f"{profile.path}: field 'level.{key}.{missing[0]}' is missing")
        levels[int(key)] = LevelCosts(*(ops[op] for op in OPS))
    if not levels:
        raise ProfileError(f"{profile.path}: no [level.<l>] table of op costs (rotate_s, hoisted_rotate_s, pmul_s, "
                           "add_s, rescale_s, mul_s); `benchmarks/bootstrap_plan.py` measures one")
    if any(c.rotate_s <= 0 or c.pmul_s <= 0 or c.add_s <= 0 for c in levels.values()):
        raise ProfileError(f"{profile.path}: rotate_s, pmul_s and add_s must be above 0 at every level")
    meta = profile.meta
    stored = profile.path.startswith("profiles/")
    return OpCostTable(ring, levels, name=profile.name, provenance="stored" if stored else profile.kind,
                       machine=str(meta.get("machine", "")), date=str(meta.get("date", "")))


def builtin_rings() -> list[int]:
    """Rings a profile ships for (``profiles/openfhe_bootstrap_n<N>.toml``)."""
    out = []
    for entry in resources.files("cryptoffload.profiles").iterdir():
        stem = entry.name.removesuffix(".toml")
        if entry.name.endswith(".toml") and stem.startswith(BUILTIN_PREFIX) and stem[len(BUILTIN_PREFIX):].isdigit():
            out.append(int(stem[len(BUILTIN_PREFIX):]))
    return sorted(out)


def load_costs(profile: str | None, ring_degree: int) -> OpCostTable:
    """The op costs for ``ring_degree``: ``profile`` (a name or TOML path), else the shipped
    profile of that ring, else the shipped one of the nearest ring scaled (:meth:`for_ring`)."""
    if profile is None:
        rings = builtin_rings()
        if not rings:
            raise ProfileError("no bootstrap op-cost profile ships with this package; give --profile "
                               "(benchmarks/bootstrap_plan.py measures one)")
        nearest = min(rings, key=lambda r: (abs(math.log2(r) - math.log2(ring_degree)), -r))
        profile = f"{BUILTIN_PREFIX}{nearest}"
    return table_from_profile(load_profile(profile)).for_ring(ring_degree)
