"""The papers' one table: the long form (authors, title, venue) and the short one (first author
et al.), every paper complete and reproduced by a study, none named by the digest's numbering."""

from __future__ import annotations

from cryptoffload.papers import PAPERS, Paper
from cryptoffload.studies import all_studies


def test_cite_and_short_forms() -> None:
    two = Paper("k", "A. Author and B. Second (Some University)", "A title", "原題", "A Journal, 2020")
    assert two.cite() == 'A. Author and B. Second (Some University), "A title", A Journal, 2020'
    assert two.short() == "A. Author et al."
    three = Paper("k", "A. Author, B. Second and C. Third", "T", "", "V")
    assert three.short() == "A. Author et al."
    assert Paper("k", "A. Author (Lab)", "T", "", "V").short() == "A. Author (Lab)"


def test_every_paper_is_complete_and_every_study_cites_one() -> None:
    for key, paper in PAPERS.items():
        assert paper.key == key and paper.authors and paper.title and paper.original_title and paper.venue
        assert "seed 00" not in paper.cite().lower()
    assert set(PAPERS) == {spec.paper.key for spec in all_studies().values()}   # each paper, its studies
