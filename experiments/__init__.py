"""Experiment orchestration and reporting (``python -m experiments.run_all``)."""
