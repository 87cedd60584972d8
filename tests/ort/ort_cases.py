"""Models and kernel tables the ORT engine's tests share."""

from dataclasses import asdict

import numpy as np
import onnx
from conftest import init, make_model, vi
from onnx import TensorProto as T
from onnx import helper as h

import onnxlint.ort.kernel_registry as kernels
import onnxlint.ort.partitioner as placement
from onnxlint.model.graph import GraphIndex
from onnxlint.ort.optimizer import graph_transformer_mgr
from onnxlint.ort.optimizer import state as optimizer_state

INF = kernels.OPEN_END


FLOATS = ["tensor(double)", "tensor(float)", "tensor(float16)"]


INTS = ["tensor(int32)", "tensor(int64)"]


CAST_TYPES = ["tensor(bool)", "tensor(double)", "tensor(float)", "tensor(float16)", "tensor(int32)", "tensor(int64)", "tensor(uint8)"]


def _rows(**ops):
    return {"ai.onnx": {op: rows for op, rows in ops.items()}}


ANY = {}  # a row with no type constraints accepts every type (CUDA NonMaxSuppression registers no constraint)


COMMON = dict(
    Shape=[[15, 18, ANY], [19, 20, ANY], [21, 22, ANY], [23, INF, ANY]], Gather=[[13, INF, ANY]], Concat=[[13, INF, ANY]],
    Reshape=[[14, 18, ANY], [19, 20, ANY], [21, 22, ANY], [23, INF, ANY]], Unsqueeze=[[13, 20, ANY], [21, 22, ANY], [23, INF, ANY]],
    Relu=[[14, INF, {"T": FLOATS}]], Add=[[14, INF, {"T": FLOATS + INTS}]], Identity=[[19, 20, ANY], [21, 22, ANY], [23, INF, ANY]],
    Dropout=[[13, INF, ANY]], Cast=[[19, 20, {"T1": CAST_TYPES, "T2": CAST_TYPES}], [21, 22, {"T1": CAST_TYPES, "T2": CAST_TYPES}],
                                    [23, 23, {"T1": CAST_TYPES, "T2": CAST_TYPES}], [24, 24, {"T1": CAST_TYPES, "T2": CAST_TYPES}],
                                    [25, INF, {"T1": CAST_TYPES, "T2": CAST_TYPES}]],
    ArgMax=[[13, INF, {"T": FLOATS}]], LSTM=[[14, INF, {"T": FLOATS, "T1": ["tensor(int32)"]}]],
    GRU=[[14, INF, {"T": FLOATS, "T1": ["tensor(int32)"]}]], ConvTranspose=[[11, INF, {"T": FLOATS}]],
    DequantizeLinear=[[21, 22, ANY], [23, INF, ANY]], Less=[[13, INF, ANY]], Mul=[[14, INF, {"T": FLOATS}]],
)


def _tables(cuda_extra=None, cpu_extra=None, version="1.24.4"):
    cuda = dict(COMMON, NonMaxSuppression=[[11, INF, ANY], [10, 10, ANY]], **(cuda_extra or {}))
    cpu = dict(COMMON, NonMaxSuppression=[[11, INF, ANY]], RandomUniformLike=[[1, 21, ANY]], **(cpu_extra or {}))
    return ({placement.CUDA: kernels.KernelTable(placement.CUDA, version, "test", _rows(**cuda)),
             placement.CPU: kernels.KernelTable(placement.CPU, version, "test", _rows(**cpu))}, version, [])


def _place(model, optimization="disabled", tables=None, version="1.24.4", target="ort-cuda"):
    index = GraphIndex(onnx.shape_inference.infer_shapes(model))
    pl = placement.Simulator(index, target, version, optimization=optimization, tables=tables or _tables(version=version)).run()
    return {p.node.name: p for p in pl.nodes.values()}, pl


def _one(op, inputs, outputs, opset=13, **attrs):
    return make_model([h.make_node(op, [n for n, *_ in inputs], [n for n, *_ in outputs], name="n", **attrs)],
                      [vi(*i) for i in inputs if i[1] is not None], [vi(*o) for o in outputs], opset=opset)


def _shape_model(dims):
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i0"], ["d0"], name="gather", axis=0),
             h.make_node("Unsqueeze", ["d0", "ax"], ["d0u"], name="unsq"),
             h.make_node("Concat", ["d0u", "minus1"], ["newshape"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "newshape"], ["y"], name="reshape")]
    return make_model(nodes, [vi("x", T.FLOAT, dims)], [vi("y", T.FLOAT, None)],
                      [init("i0", np.int64(0)), init("ax", np.array([0], np.int64)), init("minus1", np.array([-1], np.int64))], opset=19)


def _removed(model, level="all"):
    index = GraphIndex(onnx.shape_inference.infer_shapes(model))
    opt = graph_transformer_mgr.optimize(index, level)
    return {n.name: opt.removed[n.index] for s in index.scopes for n in s.nodes if n.index in opt.removed}


def _sharing_model(opset):
    """Two int64 constants 1 index Shape(x); the first is also read in an If branch by an Unsqueeze."""
    axes = {"axes": [0]} if opset < 13 else {}
    unsq_in = ["one_a"] if opset < 13 else ["one_a", "ax"]
    then_g = h.make_graph([h.make_node("Identity", ["v"], ["t"], name="then_id")], "then", [], [vi("t", T.INT64, [1])])
    else_g = h.make_graph([h.make_node("Unsqueeze", unsq_in, ["u"], name="else_unsq", **axes),
                           h.make_node("Add", ["u", "v"], ["e"], name="else_add")], "else", [], [vi("e", T.INT64, [1])])
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "one_a"], ["g1"], name="g1", axis=0),
             h.make_node("Gather", ["s", "one_b"], ["g2"], name="g2", axis=0),
             h.make_node("Add", ["g1", "g2"], ["sum"], name="add"),
             h.make_node("If", ["cond"], ["branch"], name="if", then_branch=then_g, else_branch=else_g)]
    return make_model(nodes, [vi("x", T.FLOAT, ["n", "m"]), vi("cond", T.BOOL, []), vi("v", T.INT64, [1])],
                      [vi("sum", T.INT64, []), vi("branch", T.INT64, [1])],
                      [init("one_a", np.array(1, np.int64)), init("one_b", np.array(1, np.int64)), init("ax", np.array([0], np.int64))],
                      opset=opset)


def _qkv_model(batch_dims):
    nodes = [h.make_node("MatMul", ["x", "w"], ["qkv"], name="matmul"),
             h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i0"], ["b"], name="gb", axis=0),
             h.make_node("Gather", ["s", "i1"], ["t"], name="gt", axis=0),
             h.make_node("Gather", ["s", "i2"], ["c"], name="gc", axis=0),
             h.make_node("Div", ["c", "four"], ["cd"], name="div"),
             h.make_node("Unsqueeze", ["b", "ax"], ["ub"], name="ub"),
             h.make_node("Unsqueeze", ["t", "ax"], ["ut"], name="ut"),
             h.make_node("Unsqueeze", ["cd", "ax"], ["uc"], name="uc"),
             h.make_node("Concat", ["ub", "ut", "three_four", "uc"], ["shp"], name="concat", axis=0),
             h.make_node("Reshape", ["qkv", "shp"], ["y"], name="reshape")]
    return make_model(nodes, [vi("x", T.FLOAT, [*batch_dims, 64])], [vi("y", T.FLOAT, None)],
                      [init("w", np.zeros((64, 192), np.float32)), init("i0", np.array(0, np.int64)),
                       init("i1", np.array(1, np.int64)), init("i2", np.array(2, np.int64)), init("four", np.array(4, np.int64)),
                       init("ax", np.array([0], np.int64)), init("three_four", np.array([3, 4], np.int64))], opset=17)


def _shared_weight_blocks(n: int) -> onnx.ModelProto:
    """n Add nodes that all read one small shared initializer (a LayerNorm gamma shared by every block), then a
    Shape -> Reshape on a symbolic dim, so data propagation has something to do."""
    nodes = [h.make_node("Add", [f"v{i}", "k"], [f"v{i + 1}"], name=f"add{i}") for i in range(n)]
    nodes += [h.make_node("Shape", [f"v{n}"], ["s"], name="shape"), h.make_node("Reshape", [f"v{n}", "s"], ["y"], name="reshape")]
    return make_model(nodes, [vi("v0", T.FLOAT, ["batch", 4])], [vi("y", T.FLOAT, None)],
                      [init("k", np.ones(4, np.float32))], opset=14)


def _foldable_blocks(n: int) -> onnx.ModelProto:
    """n blocks over a symbolic batch: a Shape -> Gather -> Unsqueeze -> Concat -> Reshape shape computation,
    a constant chain (Cast -> Mul of initializers) feeding an Add, an Identity, and an If on a constant
    condition whose taken branch reads a folded value; what constant folding, ReshapeFusion and the If rule
    work on together."""
    nodes, inits = [], [init("two", np.array([2.0], np.float32)), init("zero", np.array([0], np.int64)),
                        init("four", np.array([4], np.int64)), init("c", np.array(True))]
    x = "x"
    for i in range(n):
        p = f"b{i}_"
        nodes += [h.make_node("Shape", [x], [p + "s"]), h.make_node("Gather", [p + "s", "zero"], [p + "g"], axis=0),
                  h.make_node("Concat", [p + "g", "four"], [p + "shape"], axis=0),
                  h.make_node("Reshape", [x, p + "shape"], [p + "r"]),
                  h.make_node("Cast", ["two"], [p + "t"], to=T.FLOAT), h.make_node("Mul", [p + "t", "two"], [p + "k"]),
                  h.make_node("Identity", [p + "k"], [p + "ki"]),
                  h.make_node("Add", [p + "r", p + "ki"], [p + "a"])]
        then_g = h.make_graph([h.make_node("Add", [p + "a", p + "ki"], [p + "o1"])], p + "then", [],
                              [vi(p + "o1", T.FLOAT, None)])
        else_g = h.make_graph([h.make_node("Sub", [p + "a", p + "ki"], [p + "o2"])], p + "else", [],
                              [vi(p + "o2", T.FLOAT, None)])
        nodes.append(h.make_node("If", ["c"], [p + "y"], then_branch=then_g, else_branch=else_g))
        x = p + "y"
    return make_model(nodes, [vi("x", T.FLOAT, ["batch", 4])], [vi(x, T.FLOAT, None)], inits, opset=14)


def _if_fold_chain() -> onnx.ModelProto:
    """X reads the output of an If on a constant condition whose taken branch is Identity(s), s an outer value
    that only folds two runs later (each If inlined leaves one node to fold in the next run: an If's implicit
    inputs are no edges of the order). Once If_A is inlined, X reads s through the branch's Identity."""
    def vb(name):
        return vi(name, T.BOOL, [1])

    def if_node(cond, src, y, tag):
        branch = [h.make_graph([h.make_node("Identity", [src], [f"{side}{tag}"])], f"{tag}_{side}", [], [vb(f"{side}{tag}")])
                  for side in ("t", "e")]
        return h.make_node("If", [cond], [y], name=f"If_{tag}", then_branch=branch[0], else_branch=branch[1])

    nodes = [if_node("cT", "ra", "y_a", "a"), h.make_node("Not", ["y_a"], ["ca"], name="C_a"),
             h.make_node("Not", ["kF"], ["ra"], name="R_a"), if_node("ca", "rb", "y_b", "b"),
             h.make_node("Not", ["y_b"], ["s"], name="C_b"), h.make_node("Not", ["ca"], ["rb"], name="R_b"),
             if_node("cT", "s", "y_A", "A"), h.make_node("Not", ["y_A"], ["out"], name="X")]
    inits = [h.make_tensor("cT", T.BOOL, [], [True]), h.make_tensor("kF", T.BOOL, [1], [False])]
    return make_model(nodes, [], [vb("out")], inits, opset=17)


def _transformer_blocks() -> onnx.ModelProto:
    """The benchmark's transformer blocks (Shape-computed Reshapes, shared weights CSE merges, MatMul + Add,
    a constant-condition If at the end): every pass of the optimizer model has work in it."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    try:
        import transformer_blocks
    finally:
        sys.path.pop(0)
    return transformer_blocks.transformer(400)


def _cse_after_a_rewrite() -> onnx.ModelProto:
    """Relu(If(true: Identity(x))) beside Relu(x): CSE finds nothing in the first round; constant folding then
    inlines the If, the next round's EliminateIdentity rewires the first Relu to x, and the round after that
    CSE merges the two Relus."""
    then_g = h.make_graph([h.make_node("Identity", ["x"], ["t"], name="id_then")], "then", [], [vi("t", T.FLOAT, [4])])
    else_g = h.make_graph([h.make_node("Neg", ["x"], ["e"], name="neg")], "else", [], [vi("e", T.FLOAT, [4])])
    nodes = [h.make_node("If", ["c"], ["i"], name="if", then_branch=then_g, else_branch=else_g),
             h.make_node("Relu", ["i"], ["a"], name="relu_a"), h.make_node("Relu", ["x"], ["b"], name="relu_b"),
             h.make_node("Add", ["a", "b"], ["y"], name="add")]
    return make_model(nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])], [init("c", np.array(True))], opset=17)


def _anchor_blocks(n: int) -> onnx.ModelProto:
    """n torchvision-anchor-like blocks: Range(0, Shape(x)[3]) -> Reshape(-1, 1) -> Cast -> Mul by its graph input
    -> Add 0 -> Shape -> Expand. NoopElimination asks the Add's shape before constant folding has folded the
    Range chain (nothing new then, up the whole chain); once folded, the Mul (which never folds) has a static
    shape again and the Shape of it folds: an answer kept from before the fold must not be reused."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape_x"), h.make_node("Gather", ["s", "i3"], ["w"], name="gather", axis=0)]
    outs = []
    for i in range(n):
        p = f"b{i}_"
        nodes += [h.make_node("Range", ["zero", "w", "one"], [p + "r"], name=p + "range"),
                  h.make_node("Reshape", [p + "r", "col"], [p + "rc"], name=p + "reshape"),
                  h.make_node("Cast", [p + "rc"], [p + "rcf"], name=p + "cast", to=T.FLOAT),
                  h.make_node("Mul", [p + "rcf", p + "g"], [p + "m"], name=p + "mul"),
                  h.make_node("Add", [p + "m", "zf"], [p + "a"], name=p + "add"),
                  h.make_node("Shape", [p + "a"], [p + "s2"], name=p + "shape"),
                  h.make_node("Relu", ["y"], [p + "y1"], name=p + "relu1"), h.make_node("Relu", [p + "y1"], [p + "y2"], name=p + "relu2"),
                  h.make_node("Shape", [p + "y2"], [p + "sy"], name=p + "shape_y"),  # dynamic: asked in every folding run
                  h.make_node("Expand", [p + "y2", p + "s2"], [p + "out"], name=p + "expand")]
        outs += [vi(p + "out", T.FLOAT, None), vi(p + "sy", T.INT64, [2])]
    inits = [init("i3", np.array(3, np.int64)), init("zero", np.array(0, np.int64)), init("one", np.array(1, np.int64)),
             init("col", np.array([-1, 1], np.int64)), init("zf", np.array(0.0, np.float32))]
    inputs = [vi("x", T.FLOAT, [1, 3, 4, 5]), vi("y", T.FLOAT, ["n", 1])] + [vi(f"b{i}_g", T.FLOAT, [1]) for i in range(n)]
    return make_model(nodes, inputs, outs, inits, opset=13)


def _computed_reshape_blocks(n: int) -> onnx.ModelProto:
    """n blocks: Reshape(graph input, Abs(Shape(x)[2:4])) -> Mul -> Add 0 -> Shape -> Expand. Data propagation
    stops at the Abs, so the Reshape's shape is unknown until constant folding makes its shape input a constant;
    the Reshape itself never folds (its data is a graph input) and its shape input was never asked about: only
    the news that the shape input became constant can drop the "nothing new" NoopElimination's question left."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape_x"), h.make_node("Gather", ["s", "i23"], ["hw0"], name="gather", axis=0),
             h.make_node("Abs", ["hw0"], ["hw"], name="abs")]
    outs = []
    for i in range(n):
        p = f"b{i}_"
        nodes += [h.make_node("Reshape", [p + "g", "hw"], [p + "rs"], name=p + "reshape"),
                  h.make_node("Mul", [p + "rs", "k"], [p + "m"], name=p + "mul"),
                  h.make_node("Add", [p + "m", "zf"], [p + "a"], name=p + "add"),
                  h.make_node("Shape", [p + "a"], [p + "s2"], name=p + "shape"),
                  h.make_node("Expand", ["y", p + "s2"], [p + "out"], name=p + "expand")]
        outs.append(vi(p + "out", T.FLOAT, None))
    inits = [init("i23", np.array([2, 3], np.int64)), init("k", np.array(2.0, np.float32)), init("zf", np.array(0.0, np.float32))]
    inputs = [vi("x", T.FLOAT, [1, 3, 4, 5]), vi("y", T.FLOAT, [1, 5])] + [vi(f"b{i}_g", T.FLOAT, [20]) for i in range(n)]
    return make_model(nodes, inputs, outs, inits, opset=13)


def _fusion_blocks(n: int) -> onnx.ModelProto:
    """n blocks, each: a MatMul + bias Add (fused), a MatMul read by an Add and a Relu (kept), a MatMul read by
    a Relu only, a MatMul whose Add reads it through an Identity (fused once EliminateIdentity rewired it);
    Reshape -> Unsqueeze -> Reshape (one Reshape after FuseContiguousReshapes), a Reshape read by a Relu, and a
    Reshape read by a Reshape and a Relu (kept); an If on a constant condition whose branch holds a MatMul + Add
    last. What MatMulAddFusion and FuseContiguousReshapes find, beside what they must leave."""
    nodes, outs = [], []
    for i in range(n):
        p = f"b{i}_"
        nodes += [h.make_node("MatMul", ["x", p + "w"], [p + "m1"]), h.make_node("Add", [p + "m1", "bias"], [p + "a1"]),
                  h.make_node("MatMul", [p + "a1", p + "w2"], [p + "m2"]), h.make_node("Add", [p + "m2", "bias"], [p + "a2"]),
                  h.make_node("Relu", [p + "m2"], [p + "r2"]), h.make_node("MatMul", [p + "r2", p + "w2"], [p + "m3"]),
                  h.make_node("Relu", [p + "m3"], [p + "r3"]), h.make_node("MatMul", [p + "r3", p + "w2"], [p + "m4"]),
                  h.make_node("Identity", [p + "m4"], [p + "i4"]), h.make_node("Add", [p + "i4", "bias"], [p + "a4"]),
                  h.make_node("Reshape", [p + "a4", "s12"], [p + "s1"]), h.make_node("Unsqueeze", [p + "s1"], [p + "s2"], axes=[0]),
                  h.make_node("Reshape", [p + "s2", "s34"], [p + "s3"]), h.make_node("Reshape", [p + "a2", "s12"], [p + "t1"]),
                  h.make_node("Relu", [p + "t1"], [p + "t2"]), h.make_node("Reshape", [p + "r3", "s12"], [p + "u1"]),
                  h.make_node("Reshape", [p + "u1", "s34"], [p + "u2"]), h.make_node("Relu", [p + "u1"], [p + "u3"])]
        outs += [vi(p + o, T.FLOAT, None) for o in ("a2", "s3", "t2", "u2", "u3")]
    branch = [h.make_graph([h.make_node("MatMul", ["x", "w"], [f"m_{side}"]), h.make_node("Add", [f"m_{side}", "bias"], [side])],
                           side, [], [vi(side, T.FLOAT, [2, 3])]) for side in ("then", "else")]
    nodes.append(h.make_node("If", ["c"], ["y"], then_branch=branch[0], else_branch=branch[1]))
    inits = [w for i in range(n)
             for w in (init(f"b{i}_w", np.full((4, 3), i, np.float32)), init(f"b{i}_w2", np.full((3, 3), i, np.float32)))]
    inits += [init("w", np.ones((4, 3), np.float32)), init("bias", np.ones(3, np.float32)),
             init("s12", np.array([6], np.int64)), init("s34", np.array([3, 2], np.int64)), init("c", np.array(True))]
    m = make_model(nodes, [vi("x", T.FLOAT, [2, 4])], [vi("y", T.FLOAT, [2, 3]), *outs], inits, opset=12)
    return onnx.shape_inference.infer_shapes(m)


def _optimized_both_ways(monkeypatch, module, switch, counted, build):
    """graph_transformer_mgr.optimize over GraphIndex(build()) with module.<switch> False, then True, counting
    the calls to OptimizerState.<counted>: {switch: (removed, alias, constants, calls)}. A shortcut's switch: what
    the optimizer model removes, rewires and makes constant must be the same both ways."""
    calls = [0]
    real = getattr(optimizer_state.OptimizerState, counted)

    def counting(self, *args):
        calls[0] += 1
        return real(self, *args)

    monkeypatch.setattr(optimizer_state.OptimizerState, counted, counting)
    results = {}
    for on in (False, True):
        monkeypatch.setattr(module, switch, on)
        calls[0] = 0
        opt = graph_transformer_mgr.optimize(GraphIndex(build()))
        results[on] = ({k: asdict(r) for k, r in opt.removed.items()}, dict(opt.alias), set(opt.constants), calls[0])
    return results
