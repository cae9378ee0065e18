"""The capacity plan as a table: its columns, one row per quantity in GB and ms, and the words
of each layout (every client's keys on every CSD, partitioned, none fits)."""

from __future__ import annotations

from dataclasses import replace

from cryptoffload.policies.isc_plan import IscPlan
from cryptoffload.studies.isc_he_cnn.plan_table import plan_table

PLAN = IscPlan(program_name="round", program_source="test", clients=10, weights_bytes=1e9, keys_per_client_bytes=2e9,
               latency_s=0.5, throughput_per_s=2.0, nand_read_bps=8e9, dram_bytes=8e9, replicated_bytes=21e9,
               capacity_bytes=7.68e12, keys_on_every_csd=True, max_utilisation=0.8, requests_per_client_per_s=None,
               offered_per_s=None, csds_for_load=None, layout="keys-on-every-csd", csds_for_capacity=1, csds=1,
               provision_bytes=21e9, clients_per_csd=None)


def _by_quantity(plan: IscPlan) -> dict[str, dict[str, object]]:
    t = plan_table(plan)
    return {r[0]: dict(zip(t.columns, r)) for r in t.rows}


def test_keys_on_every_csd() -> None:
    t = plan_table(PLAN, "plan_clients")
    assert (t.id, t.provenance, t.title) == ("plan_clients", "mixed", "CSD capacity plan for 10 clients (round)")
    assert t.columns == ["quantity", "value", "unit", "provenance", "how"]
    assert t.rows == [
        ["model", "round", "", "derived", "test program"],
        ["clients", 10, "", "input", ""],
        ["weights per model", 1.0, "GB", "derived", "plaintexts the program reads (stored once per CSD)"],
        ["evaluation keys per client", 2.0, "GB", "derived", "relinearisation and Galois keys the program reads"],
        ["latency of one inference on a CSD", 500.0, "ms", "simulated", "one CSD, NAND at 8 GB/s, DRAM 8 GB"],
        ["throughput of one CSD", 2.0, "inferences/s", "simulated", "one inference at a time"],
        ["NAND per CSD with every client's keys on it", 21.0, "GB", "derived",
         "the paper, section 4.5.1: 0.5 GB x 10,000 clients = 5,000 GB on one CSD"],
        ["NAND per CSD available", 7680.0, "GB", "derived", "preset (assumed) unless --nand-tb"],
        ["CSDs for capacity", 1, "CSDs", "derived", "every CSD holds every client's keys"],
        ["CSDs recommended", 1, "CSDs", "derived", "capacity only: no request rate given, load not sized"],
        ["NAND per CSD to provision", 21.0, "GB", "derived", "every client's keys on every CSD"],
    ]


def test_partitioned_with_a_load() -> None:
    plan = replace(PLAN, keys_on_every_csd=False, requests_per_client_per_s=0.25, offered_per_s=2.5, csds_for_load=2,
                   layout="partitioned", csds=2, provision_bytes=11e9, clients_per_csd=5)
    v = _by_quantity(plan)
    assert v["offered load"] == {"quantity": "offered load", "value": 2.5, "unit": "inferences/s",
                                 "provenance": "input", "how": "0.25 per client"}
    assert (v["CSDs for the load"]["value"], v["CSDs for the load"]["how"]) == (2, "at most 80% busy each")
    assert v["CSDs recommended"]["how"] == "max of capacity (1) and load (2)"
    assert v["CSDs for capacity"]["how"] == "clients partitioned"
    assert (v["NAND per CSD to provision"]["value"], v["NAND per CSD to provision"]["how"]) == (11.0, "5 clients per CSD")
    keys_wanted = replace(plan, keys_on_every_csd=True)
    assert _by_quantity(keys_wanted)["CSDs for capacity"]["how"].startswith("every client's keys do not fit on one CSD")


def test_no_layout_fits() -> None:
    plan = replace(PLAN, layout="does-not-fit", csds_for_capacity=None, csds=None, provision_bytes=None)
    t = plan_table(plan)
    assert t.rows[-1] == ["CSDs for capacity", None, "CSDs", "derived",
                          "a CSD cannot hold the weights and one client's keys (3 GB)"]
    assert "CSDs recommended" not in {r[0] for r in t.rows}
