"""Utilities: data loading (``ember.utils.data``)."""
from . import data
