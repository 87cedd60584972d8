"""onnxlint: a rule-based static linter for ONNX models deployed on ONNX Runtime (CUDA, TensorRT)."""

__version__ = "0.1.0"
