"""The vocabulary's Device and Link as protocols, and the account of its devices a non-SimPy model gives.

Why protocols: ARCHITECTURE.md gives each word one meaning -- a *Device* executes jobs, a
*Link* moves bytes -- but the hardware differs in how a job is handed over (a FIFO server takes
a duration, an FPGA a loaded function and a duration, a GPU a batch, a QAT card a request on a
ring), and the project models devices in several ways: SimPy resources that queue in simulated
time (:mod:`.devices`, :mod:`.links`, :mod:`.storage`, :mod:`.qat_card`), and models that are
not SimPy -- closed forms (the TLS cost model), a numba kernel (the FPGA-reconfiguration fast
path), a list scheduler over an op DAG. So the protocols hold what every model of the concept
shares: its name and the time it spent working (what the metrics registry reads), and for a
Link its bandwidth, latency and ``transfer``. SimPy models satisfy them structurally
(``isinstance`` works, and a type checker verifies an annotation ``x: Device = FifoDevice(...)``).
A model that is not a resource cannot *be* a Device -- a function is not a server -- so it hands
back the account of each device it modelled as a :class:`DeviceAccount`, and the function that
builds those accounts is annotated to return ``Device``: the type checker, not a label, holds
that the account has everything the protocol asks for. (No such model claims to be a Link: a
Link moves bytes in simulated time through ``transfer``, which a closed form does not have; the
TLS cost model's CPU and NIC wire are simulated as resources in :mod:`.tls_node`.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Protocol, runtime_checkable

from cryptoffload.checks import JsonDict, check_positive
from cryptoffload.sim.core import Accounted, ProcessGenerator


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


@dataclass
class DeviceAccount:
    """The busy time of one device that a model which is not a SimPy resource modelled (the
    numba fast path's host CPU and FPGA, the op-DAG scheduler's devices): what the metrics
    registry reads of a Device, as a record. Not frozen: the protocol's ``name`` is a settable
    attribute, and a type checker refuses a read-only one in its place."""

    name: str
    resource_type: str
    busy_time: float

    def utilisation(self, span: float) -> float:
        """Busy time over ``span`` seconds (each account is one server)."""
        return self.busy_time / check_positive("span", span)

    def report(self, span: float | None) -> JsonDict:
        return {"type": self.resource_type, "busy_time": self.busy_time,
                "utilisation": None if span is None else self.utilisation(span)}


def device_account(name: str, resource_type: str, busy_time: float) -> Device:
    """One modelled device's account, typed as the protocol so that a type checker verifies
    that :class:`DeviceAccount` is a Device."""
    return DeviceAccount(name, resource_type, float(busy_time))
