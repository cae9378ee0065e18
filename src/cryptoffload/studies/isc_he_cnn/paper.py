"""The in-storage HE paper's numbers (Suzuki and Yamana), as the isc-he-cnn study compares
with them, and the labels its tables use for our two programs.

Why its own module: the tables, the claims and the figures all read them; none owns them.
"""

from __future__ import annotations

from cryptoffload.sim.isc.platform import PLATFORMS

GB = 1e9
#: a difference from the paper beyond this gets a note
TOLERANCE = 0.10
#: Table 2: source bandwidth (GB/s) -> latency (ms), one device
PAPER_TABLE2 = {1.0: 3850.0, 2.0: 1951.0, 4.0: 1321.0, 8.0: 1071.0, 16.0: 1055.0}
PAPER_CPU_MS = 11359.0
#: Table 3: k -> (FPGA&SSD ms, FPGA-only ms, CSD ms, FPGA&SSD /s, FPGA-only /s, CSD /s), in the
#: order of TABLE3_COLUMNS[1:]
PAPER_TABLE3: dict[int, tuple[float | None, ...]] = {
    1: (1055, 1055, 1071, 0.948, 0.948, 0.934),
    2: (1071, 1055, 1071, 1.867, 1.896, 1.867),
    4: (1321, 1071, 1071, 3.028, 3.735, 3.735),
    8: (1951, 1321, 1071, 4.100, 6.056, 7.470),
    16: (3858, 1951, 1071, 4.147, 8.201, 14.939),
    32: (None, 3858, 1071, None, 8.294, 29.879),
}
PAPER_HEADLINE = {"latency_reduction_pct": 72.2, "throughput_ratio": 3.60, "csd_vs_cpu": 10.6}
PAPER_SIZES = {"weights_gb": 3.3, "keys_gb": 0.5, "touched_gb": 17.3, "dram_gb": 8.0, "compute_s": 1.05}
TABLE3_COLUMNS = ["devices"] + [f"{p}_latency_ms" for p in PLATFORMS] + [f"{p}_throughput_per_s" for p in PLATFORMS]

CPU_LABEL = "CPU, one thread"
#: the two programs of Table 2: built from the paper's stated inputs, and fitted to Table 2
PREDICTED, FITTED = "paper inputs", "fitted to Table 2"

__all__ = ["CPU_LABEL", "FITTED", "GB", "PAPER_CPU_MS", "PAPER_HEADLINE", "PAPER_SIZES", "PAPER_TABLE2",
           "PAPER_TABLE3", "PREDICTED", "TABLE3_COLUMNS", "TOLERANCE"]
