"""cryptoffload: run, simulate and plan the offload of cryptographic work onto accelerators.

The same cryptographic work can be executed for real on this machine or simulated on hardware
we do not have; real runs calibrate the simulator (see ARCHITECTURE in the shared docs).
"""

__version__ = "0.1.0"
