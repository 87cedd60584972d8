"""What the CUDA EP decides about a node beyond its kernel table: GetCapability refusals and kernel
constructors that throw at session creation.

Read from ORT's source (onnxruntime/core/providers/cuda/cuda_execution_provider.cc: RNNNeedFallbackToCPU,
ConvTransposeNeedFallbackToCPU, CastNeedFallbackToCPU, ArgMaxOrArgMinNeedFallbackToCPU) and checked against
ORT's own partitioner (onnxruntime-gpu 1.20.2, 1.24.4, 1.31.1 under stub CUDA libraries).
"""

from __future__ import annotations

from typing import Any

from onnxlint.model.graph import NodeRef

STRING = 8  # TensorProto.STRING


def _ints(node: NodeRef, name: str) -> list[Any] | None:
    v = node.attr(name)
    return list(v) if isinstance(v, (list, tuple)) else None


def _str(node: NodeRef, name: str) -> str | None:
    v = node.attr(name)
    return v.decode() if isinstance(v, bytes) else v


RNN_ACTIVATIONS = {"LSTM": ["sigmoid", "tanh", "tanh", "sigmoid", "tanh", "tanh"], "GRU": ["sigmoid", "tanh", "sigmoid", "tanh"],
                   "RNN": ["tanh", "tanh"]}


def cuda_refusal(node: NodeRef, since: int | None) -> str | None:
    """Why CUDAExecutionProvider::GetCapability refuses a node it has a kernel for, or None."""
    op = node.op_type
    if node.domain != "ai.onnx":
        return None
    if op in RNN_ACTIVATIONS:
        for name in ("activation_alpha", "activation_beta", "clip"):
            if node.has_attr(name):
                return f"{op} sets '{name}', which cuDNN's RNN kernels do not support (RNNNeedFallbackToCPU)"
        acts = node.attr("activations")
        if acts:
            supported = RNN_ACTIVATIONS[op]
            names = [a.decode() if isinstance(a, bytes) else a for a in acts]
            if len(names) > len(supported) or any(a.lower() != s for a, s in zip(names, supported)):
                return f"{op} activations {names} differ from cuDNN's ({', '.join(supported[:len(names)])})"
        if op == "LSTM":
            if (node.attr("input_forget") or 0) != 0:
                return "LSTM with input_forget=1: cuDNN does not couple the input and forget gates"
            if len(node.inputs) >= 8 and node.inputs[7]:
                return "LSTM with peephole weights (input P): cuDNN LSTM has no peepholes"
        if op == "GRU" and (node.attr("linear_before_reset") or 0) != 1:
            return "GRU with linear_before_reset=0 (the default): cuDNN GRU implements linear_before_reset=1 only"
        return None
    if op == "ConvTranspose":
        auto_pad = _str(node, "auto_pad")
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            return f"ConvTranspose with auto_pad={auto_pad}: the CUDA EP drops it to CPU (the padding may be asymmetric)"
        pads = _ints(node, "pads")
        if pads and len(pads) % 2 == 0:
            rank = len(pads) // 2
            if any(pads[i] != pads[i + rank] for i in range(rank)):
                return f"ConvTranspose with asymmetric pads {pads} (begin != end on some axis): cuDNN pads symmetrically only"
        return None
    if op == "Cast":
        return "Cast to STRING: CUDA has no string tensors" if node.attr("to") == STRING else None
    if op in ("ArgMax", "ArgMin"):
        if (since or 0) >= 12 and (node.attr("select_last_index") or 0) != 0:
            return f"{op} with select_last_index=1: cuDNN's reduction returns the first index"
        return None
    return None


def cuda_kernel_init_failure(node: NodeRef) -> str | None:
    """CUDA kernels whose constructor throws, so the session fails although placement succeeded."""
    if node.domain != "ai.onnx":
        return None
    if node.op_type == "BatchNormalization" and (node.attr("training_mode") or 0) != 0:
        return "the CUDA BatchNormalization kernel throws for training_mode=1 at session creation"
    if node.op_type in RNN_ACTIVATIONS and (node.attr("layout") or 0) != 0:
        return f"the CUDA {node.op_type} kernel throws for layout=1 at session creation (cudnn_rnn_base.h)"
    return None
