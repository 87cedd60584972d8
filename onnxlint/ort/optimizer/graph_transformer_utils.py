"""The Level-1 transformers, in one place (core/optimizer/graph_transformer_utils.cc GenerateTransformers).

ORT's Level-1 list, in its order: the rule-based transformer (its rewrite rules: GenerateRewriteRules),
DoubleQDQPairsRemover, ConstantSharing, CommonSubexpressionElimination, ConstantFolding, MatMulAddFusion,
ReshapeFusion, FreeDimensionOverrideTransformer, GeluFusion, LayerNormFusion, the QDQ transformers, and
TransposeOptimizer last. GraphTransformerManager (graph_transformer_mgr.cc) repeats the list until nothing
changes; ConstantSharing applies once.

What is modelled, and in which order (this order is the one measured true against ORT's partitioner; it differs
from ORT's list where noted, and changing it changes verdicts):
  * step 1 opens with the rule-based transformer over every graph, then ConstantSharing once on the main graph;
  * then each graph (the main graph before its bodies) repeats CSE, the rules, ConstantFolding, ReshapeFusion,
    MatMulAddFusion (after ReshapeFusion here; ORT runs it before), QDQPropagationTransformer (its redundant
    DQ -> Q pairs only), TransposeOptimizer (its cancellation and its Shape handler), and from 1.31
    ReshapeFusion's FuseContiguousReshapes, until nothing changes.
Before the list, at every level, InferenceSession::TransformGraph runs EnsureUniqueDQForNodeUnit
(ensure_unique_dq_for_node_unit, called by the partitioner). Not modelled: DoubleQDQPairsRemover, the Q/DQ
propagation, FreeDimensionOverride (no overrides by default), GeluFusion and LayerNormFusion at Level 1 (they
fuse into contrib ops the CUDA EP also runs), the rest of the TransposeOptimizer; Level-2/3 fusions run after
partitioning, on nodes already placed.
"""

from __future__ import annotations

from dataclasses import dataclass

from onnxlint.ort.optimizer.common_subexpression_elimination import CommonSubexpressionElimination
from onnxlint.ort.optimizer.constant_folding import ConstantFolding
from onnxlint.ort.optimizer.constant_sharing import ConstantSharing
from onnxlint.ort.optimizer.graph_transformer import GraphTransformer
from onnxlint.ort.optimizer.matmul_add_fusion import MatMulAddFusion
from onnxlint.ort.optimizer.qdq_propagation import QDQPropagationTransformer
from onnxlint.ort.optimizer.reshape_fusion import ContiguousReshapeFusion, ReshapeFusion
from onnxlint.ort.optimizer.rule_based_graph_transformer import RuleBasedGraphTransformer
from onnxlint.ort.optimizer.transpose_optimizer import TransposeOptimizer
from onnxlint.ort.releases import Release


@dataclass
class Level1:
    first: GraphTransformer  # over every graph, first
    once: ConstantSharing  # then once, on the main graph
    repeated: list[GraphTransformer]  # then per graph, in this order, until nothing changes


def generate_transformers(release: Release, node_count: int) -> Level1:
    """The Level-1 transformers ORT `release` runs, for a model of node_count nodes (their per-node caches)."""
    rules = RuleBasedGraphTransformer(release)
    repeated: list[GraphTransformer] = [CommonSubexpressionElimination(release, node_count), rules,
                                        ConstantFolding(node_count), ReshapeFusion(release), MatMulAddFusion(),
                                        QDQPropagationTransformer(), TransposeOptimizer()]
    if release.contiguous_reshapes:
        repeated.append(ContiguousReshapeFusion(release.contiguous_reshapes))
    return Level1(rules, ConstantSharing(), repeated)
