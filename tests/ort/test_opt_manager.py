"""The Level-1 manager (ort.optimizer.graph_transformer_mgr): levels, passes repeated until nothing changes."""

from dataclasses import asdict

import pytest
from ort_cases import _cse_after_a_rewrite, _foldable_blocks, _if_fold_chain, _shape_model, _transformer_blocks

import onnxlint.ort.partitioner as placement
from onnxlint.model.graph import GraphIndex
from onnxlint.ort.optimizer import (
    common_subexpression_elimination,
    constant_folding,
    graph_transformer_mgr,
    matmul_add_fusion,
    optimized,
    reshape_fusion,
    rule_based_graph_transformer,
    transpose_optimizer,
)


def test_optimizer_levels():
    assert optimized.LEVELS == ("disabled", "basic", "all") == placement.OPTIMIZATION_LEVELS
    assert not graph_transformer_mgr.optimize(GraphIndex(_shape_model([2, 3])), "disabled").removed


@pytest.mark.parametrize("build", [lambda: _foldable_blocks(12), _if_fold_chain, _transformer_blocks, _cse_after_a_rewrite])
def test_a_pass_that_found_nothing_is_not_run_again_until_something_changes(monkeypatch, build):
    """The manager's run_pass: a pass that found nothing in a graph is skipped there until a removal or
    ConstantSharing changes what it reads; what the optimizer model removes, rewires and makes constant is what
    running every pass in every round gives, with fewer passes run."""

    ran = [0]
    for cls in (common_subexpression_elimination.CommonSubexpressionElimination,
                rule_based_graph_transformer.RuleBasedGraphTransformer, constant_folding.ConstantFolding,
                reshape_fusion.ReshapeFusion, matmul_add_fusion.MatMulAddFusion, transpose_optimizer.TransposeOptimizer,
                reshape_fusion.ContiguousReshapeFusion):
        real = cls.apply

        def counted(self, state, scope, real=real):
            ran[0] += 1
            return real(self, state, scope)

        monkeypatch.setattr(cls, "apply", counted)
    results = {}
    for skip in (False, True):
        monkeypatch.setattr(graph_transformer_mgr, "SKIP_UNCHANGED_PASSES", skip)
        ran[0] = 0
        out = graph_transformer_mgr.optimize(GraphIndex(build()))
        results[skip] = ({k: asdict(r) for k, r in out.removed.items()}, dict(out.alias), set(out.constants), ran[0])
    every, skipping = results[False], results[True]
    assert skipping[:3] == every[:3] and every[0]
    assert skipping[3] < every[3]
    if build is _cse_after_a_rewrite:
        assert sorted(r["reason"] for r in every[0].values()) == ["cse", "identity", "if-constant", "if-constant"]
