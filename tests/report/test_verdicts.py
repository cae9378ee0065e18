"""The one rule that judges every row with a paper value (issue 35), quick mode's abstention, and
the check that every paper cell has its verdict.

The quick/full property is tested on the rule itself: whatever the bands, a quick run's verdict is
the full run's or "not judged in quick mode" -- for a band computed as the full run's, for one
that is a lower bound of it (fewer corners), and for one made from another sample.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cryptoffload.report.result import Claim, StudyResult, Table
from cryptoffload.report.verdicts import (AGREEMENT, DIVERGENCE, FITTED, INCONCLUSIVE, MAX_HALF_WIDTH, NOT_JUDGED,
                                          Scoreboard, check_verdicts, informative, quick_kind, verdict_for,
                                          verdict_kind)

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def bands(draw: st.DrawFn) -> tuple[float, float]:
    a, b = draw(finite), draw(finite)
    return (min(a, b), max(a, b))


def test_the_issue_cases() -> None:
    # 0 .. 12 of 12 configurations, the alternative none of them: every outcome agrees -> inconclusive
    assert verdict_kind([0, 12], 12, alternative=0) == INCONCLUSIVE
    # a band over a whole 0..1 domain that holds the paper's +9.6 % and the opposite direction
    assert verdict_kind([0.79, 1.18], 1.096, alternative=1.0) == INCONCLUSIVE
    # outside the band, however wide: a divergence
    assert verdict_kind([0, 10], 12, alternative=0) == DIVERGENCE
    # narrow, holding the paper's value, far from the alternative: an agreement
    assert verdict_kind([1.15, 1.25], 1.18, alternative=2.01) == AGREEMENT
    # no band (one seed, too few repeats): inconclusive; a fitted value: not judged
    assert verdict_kind(None, 1.18, alternative=1.0) == INCONCLUSIVE
    assert verdict_kind([1.0, 1.0], 1.0, alternative=0.0, fitted=True) == FITTED


@given(bands(), finite, finite)
def test_a_divergence_is_exactly_the_paper_outside_the_band(band: tuple[float, float], paper: float, alt: float) -> None:
    kind = verdict_kind(band, paper, alt)
    assert (kind == DIVERGENCE) == (not band[0] <= paper <= band[1])


@given(bands(), finite, finite)
def test_an_agreement_needs_a_band_narrower_than_the_effect_and_a_quarter_of_the_paper(
        band: tuple[float, float], paper: float, alt: float) -> None:
    kind = verdict_kind(band, paper, alt)
    if kind == AGREEMENT:
        width = band[1] - band[0]
        assert width < abs(paper - alt) and width / 2 <= MAX_HALF_WIDTH * abs(paper)
        assert not band[0] <= alt <= band[1]  # so the band tells the paper's value from the alternative
    if band[0] <= paper <= band[1]:
        assert kind == (AGREEMENT if informative(band, paper, alt) else INCONCLUSIVE)


@given(bands(), st.floats(min_value=0, max_value=1), st.floats(min_value=0, max_value=1), finite, finite)
def test_quick_mode_agrees_with_the_full_run_or_abstains(full: tuple[float, float], lo: float, hi: float,
                                                       paper: float, alt: float) -> None:
    """A quick band that is a lower bound of the full band (fewer corners) keeps only verdicts
    the wider full band must repeat; one from another sample keeps none; one computed as the
    full run's keeps all."""
    inner = (full[0] + (full[1] - full[0]) * min(lo, hi) / 2, full[1] - (full[1] - full[0]) * min(lo, hi) / 2)
    truth = verdict_kind(full, paper, alt)
    for quick_band, basis in ((inner, "inner"), (full, "full"), (inner, "sample")):
        said = quick_kind(verdict_kind(quick_band, paper, alt), basis)
        assert said in (truth, NOT_JUDGED), (quick_band, basis, said, truth)
    assert quick_kind(verdict_kind(full, paper, alt), "full") == truth
    assert quick_kind(FITTED, "sample") == FITTED
    with pytest.raises(ValueError, match="basis"):
        quick_kind(AGREEMENT, "somewhat")


def _result(mode: str = "full") -> tuple[StudyResult, Table]:
    r = StudyResult("s", "S", mode, 1, "0", {})
    t = r.add(Table("t6", "Table 6", ["rate", "predict", "oracle_p90_s"], [[10, 1.02, 0.5], [100, 1.5, 0.9]],
                    "simulated", paper=[[10, 1.0, 0.0005], [100, 1.03, None]]))
    return r, t


def test_every_cell_with_a_paper_value_needs_its_verdict_and_the_verdict_its_cell() -> None:
    r, t = _result()
    missing = check_verdicts(r)
    assert len(missing) == 3 and all("a paper value without a verdict" in m for m in missing)
    r.verdicts += [verdict_for(t, [k], c, figure=f"{k} {c}", paper_source="cited: Table 6", alternative=a,
                               alternative_what="x", band=b)
                   for k, c, a, b in ((10, "predict", 2.0, [0.98, 1.05]), (100, "predict", 2.0, [1.4, 1.6]),
                                      (10, "oracle_p90_s", 0.0, None))]
    assert check_verdicts(r) == []
    assert [v.kind for v in r.verdicts] == [AGREEMENT, DIVERGENCE, INCONCLUSIVE]
    assert r.scoreboard.text() == "3 rows with a paper value: 1 agreement, 1 divergence, 1 inconclusive"
    # the verdict reads ours from the table: a changed cell no longer matches it
    t.rows[0][1] = 1.2
    assert any("not the table's" in p for p in check_verdicts(r))
    # a table can say where its paper values are judged instead
    r2, t2 = _result()
    t2.unjudged = "the same figures as another table, judged there"
    assert check_verdicts(r2) == []


def test_a_verdict_cannot_be_built_against_the_rule_and_a_claim_follows_its_verdict() -> None:
    r, t = _result()
    v = verdict_for(t, [10], "predict", figure="f", paper_source="cited", alternative=1.0, alternative_what="Oracle",
                    band=[0.9, 1.1])
    assert v.kind == INCONCLUSIVE and "wider than the 0 effect" in v.reason()
    with pytest.raises(ValueError, match="the rule gives 'inconclusive', not 'agreement'"):
        type(v)(**{**v.__dict__, "kind": AGREEMENT})
    r.verdicts.append(v)
    r.claims.append(Claim.of_verdict(v, paper="1.0", ours="1.02"))
    assert not [p for p in check_verdicts(r) if "claim" in p]
    r.claims.append(Claim(paper="1.0", ours="1.02", provenance="simulated", table="t6", key=[10], column="predict",
                          kind="claim"))
    assert any("its verdict says 'inconclusive'" in p for p in check_verdicts(r))


def test_a_quick_run_says_what_it_leaves_to_the_full_run() -> None:
    r, t = _result("quick")
    v = verdict_for(t, [10], "predict", figure="f", paper_source="cited", alternative=2.0, alternative_what="x",
                    band=[0.98, 1.05], quick=True, basis="sample", rerun="cryptoffload study s --out DIR",
                    quick_why="4 seeds, not 24")
    assert v.kind == NOT_JUDGED and v.full_kind == AGREEMENT
    assert v.reason() == ("quick mode's band is made otherwise than the full run's (4 seeds, not 24), so its verdict "
                          "(agreement) could differ from the full run's: cryptoffload study s --out DIR")
    r.verdicts.append(v)
    assert [p for p in check_verdicts(r) if "quick=" in p] == []
    full, _ = _result("full")
    full.verdicts.append(v)
    assert any("quick=True in a full run" in p for p in check_verdicts(full))
    assert Scoreboard.of([v]).text() == "1 row with a paper value: 1 not judged in quick mode"
