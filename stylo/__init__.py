"""stylo: classical authorship baselines, protocols and exact metrics in one harness."""

__version__ = "0.1.0"
