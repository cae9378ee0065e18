"""Every registered study, run small: no fitted value labelled as a prediction, and the report's
first screen shows one card per study.

The fits are not taken on the study's word alone: besides the fits it declares, every profile
its ``result.json`` lists is read again and each value whose source says ``fitted to ...``
propagates to the tables computed from it (``report/provenance.py``). A new study must add its
small run below (the first test fails otherwise). The studies run once per module; the
provenance test checks each result read back from disk, the card test renders all of them."""

from __future__ import annotations

import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from cryptoffload.errors import ProfileError
from cryptoffload.profiles.fits import profile_fits
from cryptoffload.report.browser import find_chromium, rendered_dom
from cryptoffload.report.html import write_index
from cryptoffload.report.provenance import check_provenance
from cryptoffload.report.result import StudyResult, load_result
from cryptoffload.studies import all_studies

HAVE_TLS_TOOLS = bool((shutil.which("nginx") or shutil.which("/usr/sbin/nginx")) and shutil.which("wrk")
                      and shutil.which("curl"))

#: the smallest run of each study that still writes every table it labels
SMALL: dict[str, dict[str, Any]] = {
    "bsgs-multidevice": dict(quick=True, measure=False, devices=(1, 2, 16)),
    "fpga-reconfig": dict(quick=True, requests=3000, rates=[10.0, 2000.0], seeds=1, workers=1, readings=False),
    "isc-he-cnn": dict(quick=True, bandwidths=[1.0, 4.0, 16.0], devices=[1, 16], plan_clients=100),
    "paillier-offload": dict(quick=True, sim_count=600, measure=False, sweep_inflight=[1]),
    "ridge": dict(quick=True, records=200, d=3, chunk=100, workers=1, accuracy=False),
    "tls-offload": dict(quick=True, clients=["curl"], count=2, planner_requests=200),
}


def test_every_registered_study_has_a_small_run() -> None:
    assert set(all_studies()) == set(SMALL)


@pytest.fixture(scope="module")
def small_runs(tmp_path_factory) -> dict[str, tuple[StudyResult, Path]]:
    runs = {}
    for name, kw in SMALL.items():
        if name == "tls-offload" and not HAVE_TLS_TOOLS:
            continue
        out = tmp_path_factory.mktemp(name)
        spec = all_studies()[name]
        try:
            spec.run(spec.config(**kw), out)
        except ValueError as exc:  # write_result refused dishonest labels: the test below reports it
            REFUSED[name] = str(exc)
            continue
        runs[name] = (load_result(out / "result.json"), out)
    return runs


#: why write_result refused a study's small run, by study
REFUSED: dict[str, str] = {}


def declared_and_profile_fits(res: StudyResult, folder: Path) -> dict[str, str]:
    fits = dict(res.fits)
    for p in res.profiles:
        path = Path(p)
        try:
            fits.update(profile_fits(path if path.is_file() else p))
        except ProfileError:
            continue  # a measured profile written elsewhere and since removed
    return fits


@pytest.mark.parametrize("name", sorted(SMALL))
def test_no_fitted_value_is_labelled_a_prediction(name: str, small_runs) -> None:
    if name == "tls-offload" and not HAVE_TLS_TOOLS:
        pytest.skip("nginx, wrk or curl not installed (make installs them)")
    assert name in small_runs, f"{name}: write_result refused the result: {REFUSED.get(name)}"
    res, out = small_runs[name]
    res.fits = declared_and_profile_fits(res, out)
    assert check_provenance(res) == []
    for c in res.claims:  # a claim that quotes a fitted number says so in its sentence
        if c.provenance == "fitted":
            assert "fitted" in c.sentence()


class _Cards(HTMLParser):
    """Collects ``data-study`` of every ``<article class='card'>`` and the text inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.cards: dict[str, str] = {}
        self.current: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "article" and "card" in (a.get("class") or "").split():
            self.current = a.get("data-study") or ""
            self.cards[self.current] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self.current = None

    def handle_data(self, data: str) -> None:
        if self.current is not None:
            self.cards[self.current] += data


def test_report_first_screen_has_a_card_for_every_study(small_runs, tmp_path: Path) -> None:
    results = [(res, str(out)) for res, out in small_runs.values()]
    doc = write_index(results, tmp_path, machine={"cpu": "test", "cores": 2}).read_text(encoding="utf-8")
    parser = _Cards()
    parser.feed(doc)
    assert set(parser.cards) == set(small_runs)
    first_table = doc.find("<table")
    assert 0 < doc.rfind("class='card'") < first_table  # the cards come before any table
    for name, text in parser.cards.items():
        res = small_runs[name][0]
        assert res.title in text and ("ours" in text), name
        if res.claims:
            assert all(c.ours in text for c in res.claims), name


@pytest.mark.skipif(find_chromium() is None, reason="no Chromium on this machine (CI has none): the card test above "
                    "checks the HTML; apt-get install chromium to check what a browser renders")
def test_report_first_screen_renders_a_card_for_every_study_in_a_browser(small_runs, tmp_path: Path) -> None:
    """The same report in a real browser (headless Chromium): every study's card is in the DOM
    it lays out, with its title and its claims."""
    results = [(res, str(out)) for res, out in small_runs.values()]
    index = write_index(results, tmp_path, machine={"cpu": "test", "cores": 2})
    parser = _Cards()
    parser.feed(rendered_dom(index))
    assert set(parser.cards) == set(small_runs)
    for name, text in parser.cards.items():
        res = small_runs[name][0]
        assert res.title in text, name
        assert all(c.ours in text for c in res.claims), name
