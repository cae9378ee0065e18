"""The vocabulary's Device and Link, as protocols, and how a model says which one it is.

Why protocols: ARCHITECTURE.md gives each word one meaning -- a *Device* executes jobs, a
*Link* moves bytes -- but the hardware differs in how a job is handed over (a FIFO server takes
a duration, an FPGA a loaded function and a duration, a GPU a batch, a QAT card a request on a
ring), and the project models devices in several ways: SimPy resources that queue in simulated
time (:mod:`.devices`, :mod:`.links`, :mod:`.storage`, :mod:`.qat_card`), and models that are
not SimPy -- closed forms (the TLS cost model), a numba kernel (the FPGA-reconfiguration fast
path), a list scheduler over an op DAG. So the protocols hold what every model of the concept
shares: its name and the time it spent working (what the metrics registry reads), and for a
Link its bandwidth, latency and ``transfer``. SimPy models satisfy them structurally
(``isinstance`` works); the others declare the concept they stand for with :func:`implements`,
which the tests check.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Protocol, TypeVar, runtime_checkable

from cryptoffload.sim.core import Accounted, ProcessGenerator

T = TypeVar("T")


@runtime_checkable
class Device(Accounted, Protocol):
    """Something that executes jobs: CPU cores, a GPU, an FPGA (slots and reconfiguration), a
    CSD, a QAT card, a SmartNIC. ``resource_type`` names the kind in metrics reports."""

    resource_type: str


@runtime_checkable
class Link(Accounted, Protocol):
    """Something that moves bytes (PCIe lanes, NAND channels, a network), with a bandwidth in
    bytes/s and a latency in seconds, shared fairly by concurrent transfers."""

    resource_type: str
    bandwidth: float
    latency: float

    def transfer(self, nbytes: float, kind: Hashable | None = None) -> ProcessGenerator: ...


def implements(*protocols: type) -> Callable[[T], T]:
    """Mark a model that is not a SimPy resource (a closed form, a numba kernel, a scheduler)
    with the vocabulary protocol(s) it stands for; read back with :func:`implemented_by`."""
    for proto in protocols:
        if proto not in (Device, Link):
            raise TypeError(f"implements() takes Device or Link, not {proto!r}")

    def mark(model: T) -> T:
        model.__implements__ = tuple(protocols)  # type: ignore[attr-defined]
        return model

    return mark


def implemented_by(model: Any) -> tuple[type, ...]:
    """The protocols ``model`` declared with :func:`implements` (empty if none)."""
    return tuple(getattr(model, "__implements__", ()))
