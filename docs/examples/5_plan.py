"""5. Planners: BSGS on N devices, computational storage for N clients.

Run from the repository root: ``.venv/bin/python docs/examples/5_plan.py``.
"""

from cryptoffload import plan

table = plan.bsgs([1, 2, 4], space="pow2")                  # strategy and baby-step size (powers of two) per N
print(table.columns[:4])                                     # ['N', 'strategy', 'bs', 'gs']
print([row[0] for row in table.rows])                        # [1, 2, 4]
p = plan.isc(10_000, requests_per_client=0.01)               # CSDs for 10,000 clients at 0.01 inferences/s each
print(p.csds, p.csds_for_capacity, p.csds_for_load)          # 116 1 116
