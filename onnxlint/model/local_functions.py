"""Which model-local functions run: ONNX Runtime inlines a function at each call and TensorRT's parser imports
its body at each call, so the body of a function that no running node calls is neither placed nor imported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnxlint.model.locations import function_path

if TYPE_CHECKING:
    from onnxlint.model.graph import GraphIndex, NodeRef


def running_roots(index: GraphIndex) -> set[int]:
    """id()s of the outermost scopes whose nodes run: the main graph (with its control-flow bodies) and each
    model-local function a running node calls, transitively."""
    if not index.scopes:
        return set()
    main = index.scopes[0]
    # the last function scope of each path: one lookup a function (a pass over every scope for each function
    # was quadratic in the functions, which a model may declare by the thousand and never call)
    by_path = {s.path: s for s in index.scopes if s.is_function}
    by_key = {}
    for f in index.model.functions:
        s = by_path.get(function_path(f.domain, f.name))
        if s is not None:
            by_key[(f.domain, f.name)] = s
    by_root: dict[int, list[NodeRef]] = {}
    for node in index.nodes:
        by_root.setdefault(id(node.scope.root), []).append(node)
    running, todo = {id(main)}, [main]
    while todo:
        for node in by_root.get(id(todo.pop()), ()):
            callee = by_key.get((node.proto.domain, node.op_type)) if index.is_local_function(node) else None
            if callee is not None and id(callee) not in running:
                running.add(id(callee))
                todo.append(callee)
    return running
