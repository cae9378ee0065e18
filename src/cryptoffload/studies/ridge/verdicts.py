"""The ridge study's verdicts (issue 35): every phase of ours at 1,000,000 records beside the
paper's, judged by the one rule of ``report/verdicts.py``.

Why its own module: ``ridge.py`` runs the protocol and lays out its tables; what each row beside the
paper's means -- which band judges it, against which alternative, where the paper's number comes
from -- is this module's, read from the rows by field (any row with ``phase``, ``key`` and
``bytes_at_1m_records``, as ``ridge.PhaseRow``).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from cryptoffload.profiles.sensitivity import Band
from cryptoffload.report.provenance import from_printed, printed
from cryptoffload.report.result import Table
from cryptoffload.report.verdicts import Verdict, paper_cells
from cryptoffload.studies.bands import Banded
from cryptoffload.studies.verdicts import Judging, judge

#: the paper's "about 2 GB of ciphertext matrices" at 1,000,000 records: one significant digit
PAPER_BYTES, PAPER_BYTES_RANGE = 2e9, (1.5e9, 2.5e9)


def phase_verdicts(table: Table, rows: Sequence[Any], bands: Mapping[str, Banded], how: Judging) -> list[Verdict]:
    """A verdict for every phase of ours at 1,000,000 records beside the paper's: each time by
    its band (this run's own noise, ``studies/ridge/bands.py``; none for a phase measured
    once), the ciphertext bytes by their count (exact: no noise) against the paper's "about
    2 GB". Nothing here predicts the paper (its QAT card, K80 and garbled circuit are not
    modelled): a verdict says whether our machine's figure lies near the paper's, not a model's."""
    records = {r.phase: r for r in rows}
    out = []
    for key, col in paper_cells(table):
        row = records[key[0]]
        name = row.key
        if col == "bytes_at_1m_records" and row.bytes_at_1m_records is not None:
            ours = row.bytes_at_1m_records
            exact = Banded("ciphertext bytes at 1,000,000 records", Band(ours, ours, ours, (), "counted: no noise"),
                           PAPER_BYTES, [])
            out.append(judge(table, key, col, exact, how, figure="ciphertext bytes at 1,000,000 records",
                             paper_source=printed("the text, about 2 GB of ciphertext matrices (read as 1.5 .. 2.5 GB)"),
                             alternative=0.0, alternative_what="none", paper_range=PAPER_BYTES_RANGE))
            continue
        out.append(judge(table, key, col, _usable(bands.get(name)), how, figure=f"{name} at 1,000,000 records (s)",
                         paper_source=printed(f"Table 2, {name}") if name != "total" else
                         from_printed("the paper's 636 + 116 + 20 s"),
                         alternative=0.0, alternative_what="none (0 s)",
                         no_band="measured once per run: no noise band (the solve runs once)",
                         narrow="time the phase at least 5 times"))
    return out


def _usable(b: Banded | None) -> Banded | None:
    """A band that rests on a noise estimate; a figure measured once has none (issue 35: a noise
    band needs at least five samples), so it is judged without a band."""
    if b is None or any(i.high == i.low for i in b.inputs):
        return None
    return b

__all__ = ["PAPER_BYTES", "PAPER_BYTES_RANGE", "phase_verdicts"]
