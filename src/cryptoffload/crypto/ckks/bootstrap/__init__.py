"""CKKS bootstrapping: the plan (level budget, baby steps, slots) a planner hands to a backend."""

from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan

__all__ = ["BootstrapPlan"]
