"""ONNX interchange: ``export`` traces a model into an ONNX file, ``load`` runs an ONNX model with ember ops.

Needs the ``onnx`` package (``pip install ember[onnx]``); ``import ember`` never imports it.
"""
from .exporter import OnnxExporterError, UnsupportedOperatorError, export
from .loader import load

__all__ = ["export", "load", "OnnxExporterError", "UnsupportedOperatorError"]
