"""The level schedule of one bootstrap: which level every phase runs at, and what is left.

Levels count down from the top of the chain (``L``, where the mod-raise lands) to 0 (``q_0``,
where the input is read). A bootstrap spends, from the top: one level per CoeffToSlot stage,
EvalMod's depth (the series and the double angles), one level per SlotToCoeff stage; what
remains below is the output's (the levels a refreshed ciphertext gives the program). The
input spends at most one more of the program's levels, *before* the raise, when its scale must
be brought down to ``q_0 / 2^r`` (:attr:`Schedule.scale_down`; an input already at level 0 is
taken at its scale).

Why a value of its own: the planner and the docs ask "how many levels does this plan leave",
the driver needs every stage's level to encode its plaintexts there, and a chain too short is
refused here once, with the count it lacks.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptoffload.crypto.ckks.errors import CkksError

__all__ = ["Schedule", "schedule"]


@dataclass(frozen=True)
class Schedule:
    """``top``: the level the raise lands on; ``coeff_to_slot``/``slot_to_coeff``: the level
    each stage runs at (its output one lower); ``eval_mod``: (input, output) levels;
    ``after``: the output's level."""

    top: int
    coeff_to_slot: tuple[int, ...]
    eval_mod: tuple[int, int]
    slot_to_coeff: tuple[int, ...]

    @property
    def after(self) -> int:
        return self.slot_to_coeff[-1] - 1

    @property
    def depth(self) -> int:
        """Levels the bootstrap spends above its output (OpenFHE's ``GetBootstrapDepth``)."""
        return self.top - self.after

    def to_dict(self) -> dict[str, object]:
        return {"top": self.top, "coeff_to_slot": list(self.coeff_to_slot), "eval_mod": list(self.eval_mod),
                "slot_to_coeff": list(self.slot_to_coeff), "levels_after": self.after, "depth": self.depth}


def schedule(levels: int, cts_stages: int, eval_mod_depth: int, stc_stages: int) -> Schedule:
    """The schedule on a chain of ``levels`` levels above ``q_0``, refused (with what is missing)
    when the bootstrap would leave no level for the output."""
    need = cts_stages + eval_mod_depth + stc_stages
    if need + 1 > levels:
        raise CkksError(f"bootstrap: the plan needs {need} levels ({cts_stages} CoeffToSlot, {eval_mod_depth} EvalMod, "
                        f"{stc_stages} SlotToCoeff) and at least one left after, but the chain has {levels}; "
                        f"use parameters with at least {need + 1} levels, or a smaller level budget")
    top = levels
    cts = tuple(top - s for s in range(cts_stages))
    em_in = top - cts_stages
    em_out = em_in - eval_mod_depth
    stc = tuple(em_out - s for s in range(stc_stages))
    return Schedule(top, cts, (em_in, em_out), stc)
