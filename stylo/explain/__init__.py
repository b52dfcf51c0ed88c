"""Explanations for the neural pair verifiers: per-token Integrated Gradients, the share of
attribution mass on named entities, and HTML/PNG renderings.

Importing this package does not import torch or captum; the explainers import them on use.
"""

from stylo.explain.entity_mass import entity_mass, entity_tokens, summarise_entity_mass
from stylo.explain.integrated_gradients import COLUMNS, explain_cross, explain_siamese
from stylo.explain.render import render_html, render_png

__all__ = [
    "COLUMNS",
    "entity_mass",
    "entity_tokens",
    "explain_cross",
    "explain_siamese",
    "render_html",
    "render_png",
    "summarise_entity_mass",
]
