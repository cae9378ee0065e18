"""``bootstrap_setup(plan)`` and ``bootstrap(ct)`` for a backend that runs the driver on itself.

Why a mixin: the RNS backends run the bootstrap with their own ops, and the recording backend
runs the *same* driver on itself so that every op of the bootstrap is recorded (its op counts
and, over the twin, its kernel launches); both differ only in how the keys are made
(:meth:`Bootstraps.bootstrap_keygen`). Every other backend keeps the interface's default,
which refuses by name (SEAL, the emulator); OpenFHE runs its own ``EvalBootstrap`` behind the
same two calls.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from cryptoffload.crypto.ckks.bootstrap.driver import MESSAGE_RATIO_BITS, Bootstrapper, BootstrapRun
from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.crypto.ckks.errors import CkksError

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.backend import Ciphertext, CkksBackend

__all__ = ["Bootstraps", "as_plan"]


def as_plan(plan: object) -> BootstrapPlan:
    """``plan`` as a :class:`BootstrapPlan` (None: the default plan)."""
    if plan is None:
        return BootstrapPlan()
    if not isinstance(plan, BootstrapPlan):
        raise CkksError(f"bootstrap_setup: expected a BootstrapPlan, got {type(plan).__name__}")
    return plan


class Bootstraps:
    """Mixin (before the backend class): the bootstrap of :mod:`.driver` on this backend."""

    _bootstrapper: Bootstrapper | None = None
    #: the timing and levels of the latest :meth:`bootstrap`
    last_bootstrap: BootstrapRun | None = None

    def _backend(self) -> CkksBackend:
        """This object as the backend it is mixed into."""
        from cryptoffload.crypto.ckks.backend import CkksBackend  # noqa: PLC0415 -- the interface imports this package

        if not isinstance(self, CkksBackend):
            raise TypeError(f"{type(self).__name__}: Bootstraps is a mixin of CKKS backends")
        return self

    def bootstrap_keygen(self, plan: BootstrapPlan) -> None:
        """Make the keys a bootstrap with ``plan`` uses that this key set lacks."""
        raise NotImplementedError

    @property
    def bootstrapper(self) -> Bootstrapper:
        """The prepared bootstrap (stages, EvalMod, schedule): for a caller that runs or splits
        its phases itself (:meth:`Bootstrapper.run` with its ``stage`` runner, as engines/bootstrap_run.py does)."""
        if self._bootstrapper is None:
            raise CkksError("bootstrap: call bootstrap_setup(plan) first")
        return self._bootstrapper

    def bootstrap_setup(self, plan: BootstrapPlan | None = None, *,
                        message_ratio_bits: int = MESSAGE_RATIO_BITS) -> dict[str, float]:
        """The keys ``plan`` needs (its rotations, conjugation, the sparse-secret encapsulation)
        and its plaintexts, encoded once. Returns the seconds of each: ``{"keygen_s",
        "setup_s"}`` (as the OpenFHE adapter's)."""
        plan = as_plan(plan)
        t0 = time.perf_counter()
        self.bootstrap_keygen(plan)
        t1 = time.perf_counter()
        boot = Bootstrapper(self._backend(), plan, message_ratio_bits=message_ratio_bits)
        boot.prepare()
        self._bootstrapper = boot
        return {"keygen_s": t1 - t0, "setup_s": time.perf_counter() - t1}

    def bootstrap(self, ct: Ciphertext) -> Ciphertext:
        """A ciphertext of ``ct``'s values and scale with the schedule's levels left
        (:attr:`last_bootstrap` has the run's phases)."""
        out, self.last_bootstrap = self.bootstrapper.run(ct)
        return out
