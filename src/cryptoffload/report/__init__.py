"""Study output (base library, its top): tables, plots, result files and the HTML report.

What flows in and out: a study's results as plain dataclasses (rows built with :mod:`.rows`)
in; the terminal tables, one CSV per table, PNGs and last ``result.json`` (the study output
contract of ARCHITECTURE.md) out, then ``report/index.html`` assembled from every study's
result. The studies and the CLI call it; it imports nothing of the project above the base
library.

Modules (start with :mod:`.result`, then :mod:`.rows`):

* :mod:`.result` -- the result dataclasses and :func:`~.result.write_result`, the one writer
  (everything complete, or nothing that looks complete);
* :mod:`.rows` -- table rows as typed records: ``column()``, ``hidden()``, ``table_of``, ``by_key``;
* :mod:`.provenance` -- holds every table to its provenance label (a fit is never a prediction);
* :mod:`.tables` -- terminal tables, ours beside the paper's; :mod:`.palette` -- one colour per
  provenance (and per verdict) for badges, tables and plots; :mod:`.plots` -- matplotlib, one
  figure per file, series told apart by shape;
* :mod:`.html` -- ``index.html``: one card per study first, then tables (:mod:`.grid`), figures
  (:mod:`.figures`) and notes, all listed in the contents (:mod:`.contents`);
  :mod:`.browser` -- the report looked at in a headless browser; :mod:`.audit` -- what a
  reader runs into there (sideways scrolling, dead links, characters without a font).
"""
