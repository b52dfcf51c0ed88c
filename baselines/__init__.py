"""Authorship methods behind one interface (see ``stylo.verifier``)."""
