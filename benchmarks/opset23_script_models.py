# ruff: noqa: F821  (onnxscript reads the quoted dims in these annotations as symbolic dims, not as names)
"""onnxscript models of the opset-23 ops no exporter of the producer set emits (make_producer_exports.py, stage
newops): onnxscript parses these functions' source and resolves names at module level, so they live here, in a
module only that stage (venv with onnxscript) imports. The annotations must not be postponed (no __future__ import).
"""
from onnxscript import FLOAT, INT64, script
from onnxscript import opset23 as op


@script(default_opset=op)
def attention_gqa(q: FLOAT["B", "S", 64], k: FLOAT["B", "S", 32], v: FLOAT["B", "S", 32]) -> FLOAT["B", "S", 64]:
    """Attention-23 in its 3-D (hidden) form, grouped-query (4 query heads, 2 KV heads), causal."""
    y, _, _, _ = op.Attention(q, k, v, q_num_heads=4, kv_num_heads=2, is_causal=1)
    return y


@script(default_opset=op)
def attention_kv(q: FLOAT["B", 4, "S", 16], k: FLOAT["B", 4, "S", 16], v: FLOAT["B", 4, "S", 16],
                 mask: FLOAT["S", "T"], past_k: FLOAT["B", 4, "P", 16], past_v: FLOAT["B", 4, "P", 16]
                 ) -> tuple[FLOAT["B", 4, "S", 16], FLOAT["B", 4, "T", 16], FLOAT["B", 4, "T", 16]]:
    """Attention-23 in its 4-D form with a float mask and a KV cache (present key/value outputs)."""
    y, pk, pv, _ = op.Attention(q, k, v, mask, past_k, past_v)
    return y, pk, pv


@script(default_opset=op)
def rms(x: FLOAT["B", "S", 64], scale: FLOAT[64]) -> FLOAT["B", "S", 64]:
    """RMSNormalization-23 over the last axis."""
    return op.RMSNormalization(x, scale, axis=-1, epsilon=1e-6)


@script(default_opset=op)
def rotary(x: FLOAT["B", "S", 64], cos: FLOAT[128, 8], sin: FLOAT[128, 8], pos: INT64["B", "S"]) -> FLOAT["B", "S", 64]:
    """RotaryEmbedding-23 on a 3-D input (4 heads of 16), position ids into the cos/sin caches."""
    return op.RotaryEmbedding(x, cos, sin, pos, num_heads=4)


MODELS = {"attention23_gqa_causal": attention_gqa, "attention23_mask_kvcache": attention_kv, "rmsnorm23": rms,
          "rotary23": rotary}
