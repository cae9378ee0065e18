"""Shared test set-up. Its presence also puts tests/ on sys.path, so every test module can
import the helpers in tests/cli_helpers.py."""
