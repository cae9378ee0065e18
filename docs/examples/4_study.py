"""4. Studies: run one (here a small fpga-reconfig) and read its result.

Run from the repository root: ``.venv/bin/python docs/examples/4_study.py``; it writes
out/fpga-reconfig-small/ (result.json, one CSV per table, figures).
"""

from cryptoffload import study

print(study.names()[:3])                                     # ['bsgs-multidevice', 'fpga-reconfig', 'isc-he-cnn']
result = study.run("fpga-reconfig", "out/fpga-reconfig-small", requests=5000, seeds=1, rates=[100],
                   readings=False)                           # the options of `study fpga-reconfig --help`
table = result.tables["table6_p90_vs_oracle"]
print(table.columns[:2], table.provenance)                   # ['rate', 'software'] simulated
print(study.read("out/fpga-reconfig-small").mode)            # quick
