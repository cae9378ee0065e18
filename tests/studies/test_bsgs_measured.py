"""The measured half of bsgs-multidevice, without running anything: the claims the comparison
supports and the two-workers-vs-one rows (the runs themselves: test_bsgs_multidevice.py)."""

from __future__ import annotations

import pytest

from cryptoffload.studies import _bsgs_measured as st


def test_measured_claims_name_the_worst_configuration_and_why() -> None:
    rows = [st.MeasuredRow(1, "replicate", 4, 0.100, 0.105, 0.1, 0.0, 0.10, 0.11),
            st.MeasuredRow(2, "replicate", 4, 0.080, 0.090, 0.1, 0.0, 0.08, 0.10),
            st.MeasuredRow(2, "broadcast", 16, 0.100, 0.150, 0.1, 0.0, 0.14, 0.16)]
    agree, worst = st.measured_claims(rows, [(1.0, 0.97), (1.0, 0.95)])
    assert agree.kind == "agreement" and "2 of 3" in agree.ours
    assert worst.kind == "divergence" and worst.key == [2, "broadcast", 16] and "33.3 %" in worst.ours
    assert "GIL" in worst.why
    _, loaded = st.measured_claims(rows, [(1.0, 0.97), (0.6, 0.4)])
    assert "other processes took the cores" in loaded.why and "0.40" in loaded.why


def test_scaling_rows_and_the_parallelism_the_cpu_allowed() -> None:
    rows = [st.MeasuredRow(1, "replicate", 4, 0.10, 0.12, 0.1, 0.0, 0.11, 0.15),
            st.MeasuredRow(2, "replicate", 4, 0.08, 0.06, 0.05, 0.0, 0.05, 0.09),
            st.MeasuredRow(2, "broadcast", 4, 0.09, 0.10, 0.05, 0.0, 0.09, 0.12)]
    shares = [(1.0, 1.0), (0.2, 0.1), (0.5, 0.4)]  # own cores; one core's worth shared; in between
    assert st.parallelism(shares) == pytest.approx(1.6)  # median of 2.0, 1.0, 1.6
    assert st.scaling_rows(rows, shares) == [[4, pytest.approx(2.0), pytest.approx(1.25), pytest.approx(1.6)]]
    assert rows[0].spread == pytest.approx((0.15 - 0.11) / 0.12)
