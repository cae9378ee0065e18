"""The capacity plan (``policies/isc_plan.py``) as a report table: one row per quantity, with
its unit, provenance and how it was obtained.

Why here and not in the policy: the policy decides (it returns numbers); the words and units
around them are the report's, shared by the isc-he-cnn study and ``cryptoffload plan isc``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cryptoffload.policies.isc_plan import IscPlan
from cryptoffload.report.result import Table
from cryptoffload.report.rows import column, table_of

GB = 1e9


@dataclass(frozen=True)
class PlanRow:
    quantity: str = column()
    value: Any = column()
    unit: str = column()
    provenance: str = column()
    how: str = column()


def _sizes(plan: IscPlan) -> list[PlanRow]:
    """What the program and one simulated CSD give: sizes, latency, throughput, NAND."""
    return [
        PlanRow("model", plan.program_name, "", "derived", f"{plan.program_source} program"),
        PlanRow("clients", plan.clients, "", "input", ""),
        PlanRow("weights per model", plan.weights_bytes / GB, "GB", "derived",
                "plaintexts the program reads (stored once per CSD)"),
        PlanRow("evaluation keys per client", plan.keys_per_client_bytes / GB, "GB", "derived",
                "relinearisation and Galois keys the program reads"),
        PlanRow("latency of one inference on a CSD", plan.latency_s * 1e3, "ms", "simulated",
                f"one CSD, NAND at {plan.nand_read_bps / GB:g} GB/s, DRAM {plan.dram_bytes / GB:g} GB"),
        PlanRow("throughput of one CSD", plan.throughput_per_s, "inferences/s", "simulated", "one inference at a time"),
        PlanRow("NAND per CSD with every client's keys on it", plan.replicated_bytes / GB, "GB", "derived",
                "the paper, section 4.5.1: 0.5 GB x 10,000 clients = 5,000 GB on one CSD"),
        PlanRow("NAND per CSD available", plan.capacity_bytes / GB, "GB", "derived", "preset (assumed) unless --nand-tb"),
    ]


def _load(plan: IscPlan) -> list[PlanRow]:
    """The load rows, when a request rate was given."""
    if plan.requests_per_client_per_s is None:
        return []
    return [PlanRow("offered load", plan.offered_per_s, "inferences/s", "input",
                    f"{plan.requests_per_client_per_s:g} per client"),
            PlanRow("CSDs for the load", plan.csds_for_load, "CSDs", "derived",
                    f"at most {plan.max_utilisation:.0%} busy each")]


def _capacity_how(plan: IscPlan) -> str:
    if plan.layout == "does-not-fit":
        both = plan.weights_bytes + plan.keys_per_client_bytes
        return f"a CSD cannot hold the weights and one client's keys ({both / GB:.3g} GB)"
    if plan.layout == "keys-on-every-csd":
        return "every CSD holds every client's keys"
    if plan.keys_on_every_csd:
        return ("every client's keys do not fit on one CSD: clients partitioned over CSDs (two requests of one "
                "CSD's clients then queue, or keys move between CSDs)")
    return "clients partitioned"


def recommended_how(plan: IscPlan) -> str:
    """Which bounds the recommended count took: capacity and load, or capacity alone when no
    request rate was given (then the count says nothing about load)."""
    if plan.csds_for_load is None:
        return "capacity only: no request rate given, load not sized"
    return f"max of capacity ({plan.csds_for_capacity:,}) and load ({plan.csds_for_load:,})"


def _counts(plan: IscPlan) -> list[PlanRow]:
    """CSDs for capacity, and (when a layout fits) the recommendation and the NAND to provision."""
    rows = [PlanRow("CSDs for capacity", plan.csds_for_capacity, "CSDs", "derived", _capacity_how(plan))]
    if plan.csds is None or plan.provision_bytes is None:
        return rows
    rows.append(PlanRow("CSDs recommended", plan.csds, "CSDs", "derived", recommended_how(plan)))
    how = ("every client's keys on every CSD" if plan.clients_per_csd is None
           else f"{plan.clients_per_csd:,} clients per CSD")
    rows.append(PlanRow("NAND per CSD to provision", plan.provision_bytes / GB, "GB", "derived", how))
    return rows


def plan_table(plan: IscPlan, table_id: str = "plan_isc") -> Table:
    """The plan as a table (provenance ``mixed``: sizes derived, latency simulated, counts computed)."""
    return table_of(PlanRow, _sizes(plan) + _load(plan) + _counts(plan), id=table_id,
                    title=f"CSD capacity plan for {plan.clients:,} clients ({plan.program_name})", provenance="mixed",
                    note="Sizes from the program; latency simulated on one CSD. The paper's rule keeps every client's "
                         "keys on every CSD (section 4.5.1).")


__all__ = ["PlanRow", "plan_table", "recommended_how"]
