"""The knobs of one CKKS bootstrap, as data a planner hands to any backend.

Why OpenFHE's knobs: ``EvalBootstrapSetup(levelBudget, dim1, slots)`` exposes exactly what a
planner chooses -- how many levels CoeffToSlot and SlotToCoeff may spend (each level one BSGS
stage collapsing several FFT layers) and each stage family's baby-step count -- so the same
plan runs on OpenFHE and on our RNS-CKKS backend and the two are compared at the same split.
``0`` in ``dim1`` means the library's default baby-step count.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptoffload.checks import JsonDict
from cryptoffload.crypto.ckks.errors import CkksError

#: Hamming weight of the ephemeral secret the mod-raise runs under (the sparse-secret
#: encapsulation, ``gpu/sparse.py``; OpenFHE's SPARSE_ENCAPSULATED and Lattigo's default):
#: ``|I| <= 16`` after the raise
EPHEMERAL_WEIGHT = 32
#: most levels a homomorphic DFT may spend (OpenFHE caps levelBudget at log2(slots))
MAX_STAGE_LEVELS = 17


@dataclass(frozen=True)
class BootstrapPlan:
    """``level_budget``: (CoeffToSlot levels, SlotToCoeff levels); ``dim1``: their baby-step
    counts (powers of two, or 0 for the default); ``slots``: a power of two up to N/2 (fewer is
    sparse packing)."""

    level_budget: tuple[int, int] = (3, 3)
    dim1: tuple[int, int] = (0, 0)
    slots: int = 0   # 0: full packing, N/2

    def __post_init__(self) -> None:
        if len(self.level_budget) != 2 or len(self.dim1) != 2:
            raise CkksError(f"a bootstrap plan's level budget and dim1 are pairs (CoeffToSlot, SlotToCoeff), "
                            f"got {self.level_budget!r} and {self.dim1!r}")
        for what, value in (("level budget", self.level_budget), ("dim1", self.dim1)):
            if any(isinstance(v, bool) or not isinstance(v, int) for v in value):
                raise CkksError(f"a bootstrap plan's {what} holds integers, got {value!r}")
        if not all(1 <= b <= MAX_STAGE_LEVELS for b in self.level_budget):
            raise CkksError(f"a bootstrap plan's level budget is 1..{MAX_STAGE_LEVELS} levels per transform, "
                            f"got {self.level_budget!r}")
        if any(d < 0 or (d and d & (d - 1)) for d in self.dim1):
            raise CkksError(f"a bootstrap plan's dim1 is 0 (the default) or a power of two, got {self.dim1!r}")
        if isinstance(self.slots, bool) or not isinstance(self.slots, int) or self.slots < 0 or \
                (self.slots and self.slots & (self.slots - 1)):
            raise CkksError(f"a bootstrap plan's slots is 0 (full packing) or a power of two, got {self.slots!r}")

    def slots_for(self, ring_degree: int) -> int:
        """The slot count at ring degree ``ring_degree`` (full packing: N/2)."""
        full = ring_degree // 2
        if self.slots > full:
            raise CkksError(f"a bootstrap plan for {self.slots} slots does not fit N = {ring_degree} ({full} slots)")
        return self.slots or full

    def to_dict(self) -> JsonDict:
        return {"level_budget": list(self.level_budget), "dim1": list(self.dim1), "slots": self.slots}
