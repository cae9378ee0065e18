"""Which rotation keys a slot rotation applies.

Keys exist per step; like SEAL, a step without its own key is composed from the keys of its
non-adjacent form (power-of-two steps), one key switch per term. Every backend and the
recording backend plan rotations here, so a trace lists the key switches a library really runs.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from cryptoffload.crypto.ckks.errors import CkksError

__all__ = ["naf", "power_of_two_steps", "rotation_plan"]


def naf(value: int) -> list[int]:
    """Non-adjacent form of ``value`` as signed powers of two (SEAL's ``util::naf``): how SEAL
    composes a rotation whose step has no key of its own from power-of-two keys."""
    res = []
    sign = value < 0
    value = abs(value)
    i = 0
    while value:
        zi = (2 - (value & 3)) if value & 1 else 0
        value = (value - zi) >> 1
        if zi:
            res.append((-zi if sign else zi) * (1 << i))
        i += 1
    return res


def power_of_two_steps(slots: int) -> list[int]:
    """``1, -1, 2, -2, ...`` up to ``slots/2`` (whose left and right rotations coincide): the
    default key set, from which any step can be composed (SEAL's default Galois keys minus
    conjugation, which real-valued CKKS does not need)."""
    out: list[int] = []
    k = 1
    while k < slots:
        out.append(k)
        if k != slots // 2:
            out.append(-k)
        k *= 2
    return out


def rotation_plan(steps: int, galois: Mapping[int, str], slots: int) -> list[str]:
    """Names (``galois:<step>``) of the keys a left rotation by ``steps`` applies, in order:
    the step's own key if ``galois`` (step mod slots -> key name) has one, else one key per
    term of its NAF (recursively; a term of ``slots`` is the identity and skipped). A missing
    key is refused with a :class:`CkksError` naming it."""
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise CkksError(f"rotate: steps must be an integer, got {steps!r}")
    steps = int(steps)
    if abs(steps) >= slots:
        raise CkksError(f"rotate: step {steps} is out of range: |step| < slots = {slots}")

    def plan(s: int) -> list[str]:
        if s == 0:
            return []
        key = galois.get(s % slots)
        if key is not None:
            return [key]
        terms = naf(s)
        if len(terms) == 1:
            raise KeyError(s)
        return [k for t in terms if abs(t) != slots for k in plan(t)]

    try:
        return plan(steps)
    except KeyError as exc:
        have = sorted((int(n.split(":", 1)[1]) for n in galois.values()), key=lambda x: (abs(x), x))
        raise CkksError(f"rotate: no Galois key for step {steps} (missing {exc.args[0]}; "
                        f"keys: {have[:12]}{' ...' if len(have) > 12 else ''}); "
                        "pass it to keygen(rotations=...)") from None
