"""The papers' one table: the long form (authors, title, venue) and the short one (first author
et al.), every paper complete and reproduced by a study, none named by the digest's numbering."""

from __future__ import annotations

import re
from pathlib import Path

from cryptoffload.papers import PAPERS, Paper
from cryptoffload.studies import all_studies


def test_cite_and_short_forms() -> None:
    two = Paper("k", "A. Author and B. Second (Some University)", "A title", "原題", "A Journal, 2020")
    assert two.cite() == 'A. Author and B. Second (Some University), "A title", A Journal, 2020'
    assert two.short() == "A. Author et al."
    three = Paper("k", "A. Author, B. Second and C. Third", "T", "", "V")
    assert three.short() == "A. Author et al."
    assert Paper("k", "A. Author (Lab)", "T", "", "V").short() == "A. Author (Lab)"
    assert two.brief() == "A. Author et al., A Journal, 2020"       # no short venue: the venue
    assert Paper("k", "A. B and C. D", "T", "", "A Journal, 2020", "AJ 2020").brief() == "A. B et al., AJ 2020"


def test_every_paper_is_complete_and_every_study_cites_one() -> None:
    for key, paper in PAPERS.items():
        assert paper.key == key and paper.authors and paper.title and paper.original_title and paper.venue
        assert "seed 00" not in paper.cite().lower()
    assert set(PAPERS) == {spec.paper.key for spec in all_studies().values()}   # each paper, its studies


REPO = Path(__file__).resolve().parents[1]
TEXT_SUFFIXES = {".py", ".md", ".toml", ".json", ".csv", ".txt", ".html", ".c", ".cu", ".h", ".sh", ".cfg", ".yaml"}


def _product_text_files() -> list[Path]:
    files = [REPO / "README.md"]
    for top in ("src", "docs", "benchmarks"):
        files += [p for p in (REPO / top).rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES]
    return files


def test_no_product_file_names_a_paper_by_the_digests_numbering() -> None:
    """"seed 000..004" is the papers' digest's private numbering: it means nothing to a user and
    collides with ``--seed``. Papers are named through ``PAPERS`` instead."""
    files = _product_text_files()
    assert len(files) > 100 and REPO / "src" / "cryptoffload" / "papers.py" in files
    numbered = re.compile(r"seed[ _-]?00[0-4]", re.IGNORECASE)
    hits = [f"{p.relative_to(REPO)}:{n}" for p in files
            for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            if numbered.search(line)]
    assert not hits, f"name the paper (cryptoffload.papers.PAPERS[key].cite()/short()), not its digest number: {hits}"
