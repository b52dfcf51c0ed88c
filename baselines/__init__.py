"""Authorship methods behind one interface (see ``baselines.base``)."""
