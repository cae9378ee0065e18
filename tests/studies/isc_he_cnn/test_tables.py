"""The isc-he-cnn tables' typed rows: Table 3's fields are its columns in the contract's order,
the paper's Table 3 read into them by name, Table 2's rows carry their bandwidth as a number."""

from __future__ import annotations

from types import SimpleNamespace

from cryptoffload.report.rows import columns_of
from cryptoffload.studies.isc_he_cnn.paper import CPU_LABEL, PAPER_CPU_MS, TABLE3_COLUMNS
from cryptoffload.studies.isc_he_cnn.tables import Table2Row, Table3Row, cpu_reference, paper_table3_row, table2


def test_table3_fields_are_its_columns() -> None:
    assert columns_of(Table3Row) == TABLE3_COLUMNS == [
        "devices", "fpga_ssd_latency_ms", "fpga_only_latency_ms", "csd_latency_ms", "fpga_ssd_throughput_per_s",
        "fpga_only_throughput_per_s", "csd_throughput_per_s"]
    assert columns_of(Table2Row) == ["bandwidth", "program", "provenance", "latency_ms", "speedup_vs_cpu"]


def test_the_papers_table3_by_name() -> None:
    row = paper_table3_row(32)
    assert row == Table3Row(32, fpga_ssd_latency_ms=None, fpga_only_latency_ms=3858, csd_latency_ms=1071,
                            fpga_ssd_throughput_per_s=None, fpga_only_throughput_per_s=8.294,
                            csd_throughput_per_s=29.879)
    assert row.latency_ms("csd") == 1071 and row.throughput_per_s("fpga_only") == 8.294
    assert paper_table3_row(3) is None


class _Setting(SimpleNamespace):
    """Table 2's view of a run: a sweep, a program, labels; simulation replaced by fixed runs."""


def test_table2_rows_beside_the_papers(monkeypatch) -> None:
    import cryptoffload.studies.isc_he_cnn.tables as tables

    lat = {2.0: 2.0, 3.0: 1.5}  # seconds at each swept bandwidth (3 GB/s is not in the paper)
    monkeypatch.setattr(tables, "simulate",
                        lambda comp, csd, k, q, source_gbps, record, seed: SimpleNamespace(mean_latency_s=lat[source_gbps]))
    program = SimpleNamespace(measured_wall_s=lambda: None)
    setting = _Setting(bandwidths=[2.0, 3.0], world=SimpleNamespace(compiled=None), fitted=None, csd=None, queries=1,
                       seed=1, program=program, label="paper inputs", provenance="simulated",
                       inputs=["a"], fit_inputs=["b"])
    t2 = table2(setting)  # type: ignore[arg-type]
    assert t2.cpu == cpu_reference(program)
    assert t2.rows == [Table2Row("2 GB/s", "paper inputs", "simulated", 2000.0, PAPER_CPU_MS / 2000.0, gbps=2.0),
                       Table2Row("3 GB/s", "paper inputs", "simulated", 1500.0, PAPER_CPU_MS / 1500.0, gbps=3.0),
                       Table2Row(CPU_LABEL, "", "cited", PAPER_CPU_MS, 1.0)]
    assert t2.paper == [Table2Row("2 GB/s", "paper inputs", None, 1951.0, PAPER_CPU_MS / 1951.0, gbps=2.0),
                        Table2Row("3 GB/s", "paper inputs", None, None, None, gbps=3.0),
                        Table2Row(CPU_LABEL, "", None, PAPER_CPU_MS, 1.0)]
    assert t2.row_inputs == [["a"], ["a"], []] and t2.fitted_runs == {}


def test_the_speedup_column_is_derived_only_where_no_row_is_fitted() -> None:
    from cryptoffload.studies.isc_he_cnn.tables import speedup_derived

    simulated, fitted = SimpleNamespace(provenance="simulated"), SimpleNamespace(provenance="fitted")
    assert speedup_derived(simulated, SimpleNamespace(fitted_runs={}))  # type: ignore[arg-type]
    # a fitted row's speedup is computed from the fit: it must say fitted, not derived
    assert not speedup_derived(simulated, SimpleNamespace(fitted_runs={8.0: None}))  # type: ignore[arg-type]
    assert not speedup_derived(fitted, SimpleNamespace(fitted_runs={}))  # type: ignore[arg-type]
