"""Shared helpers for the notebooks of the *Attention in NLP* course."""

from attention_course.plotting import show_heatmaps

__all__ = ["show_heatmaps"]
__version__ = "0.1.0"
