"""The graph partitioner (core/framework/graph_partitioner.cc): ORT's node placement for a list of execution
providers, statically.

Mirrors what ORT does at session creation: the Level-1 graph transformers run first (`ort.optimizer`), then
each EP in priority order claims the nodes it has a kernel for (op, domain, since-version, bound type
constraints; CUDA also refuses some attribute combinations in GetCapability: `cuda_capability`), a node no EP
has a kernel for is expanded into its function body (`function_expansion`), GetCpuPreferredNodes moves small
shape computations that only feed on CPU tensors back to CPU on purpose (`cpu_preferred`), the duplicate
Casts InsertCastTransformer removes after partitioning go (`insert_cast_transformer`), and the partition
implies where Memcpy nodes are inserted (`memcpy`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from onnxlint.model.graph import ORT_DOMAINS, STANDARD_DOMAINS, GraphIndex, NodeRef
from onnxlint.ort import cpu_preferred, cuda_capability, insert_cast_transformer, memcpy, model_load, node_args, schema_registry
from onnxlint.ort import kernel_registry as kernels
from onnxlint.ort.function_expansion import expand_function, function_body_gaps
from onnxlint.ort.optimizer.graph_transformer_mgr import optimize
from onnxlint.ort.optimizer.optimized import LEVELS, Optimized
from onnxlint.ort.verdicts import CPU, CUDA, GONE_STATUSES, TARGET_EPS, NodePlacement, Placement

OPTIMIZATION_LEVELS = LEVELS
Rejects = Callable[[NodeRef, str], "str | None"]  # (node, target) -> why the EP refuses the node (a rule file's), or None
# the kernel tables of the target's EPs, the version they stand for, notes on a substitution (resolve_tables)
Tables = tuple[dict[str, kernels.KernelTable], str, list[str]]


def resolve_tables(target: str, ort_version: str | None) -> Tables:
    """Kernel tables for the target's EPs at the requested ORT version, with notes on any substitution."""
    requested, fallback = kernels.chosen_release(ort_version)  # unset: the newest shipped tables, never the installed ORT
    eps = [ep for ep in TARGET_EPS[target] if ep in kernels.EP_SHORT]
    versions, note = kernels.resolve([kernels.EP_SHORT[ep] for ep in eps], requested)  # one note per version
    tables = {ep: kernels.load(kernels.EP_SHORT[ep], versions[kernels.EP_SHORT[ep]]) for ep in eps}
    return tables, requested, [n for n in (fallback, note) if n]


class Simulator:
    """Nodes with the same signature (domain, op, opset, value types) get the same kernel, so each signature is
    looked up once; only nodes a rejects() rule or a GetCapability check may look at are decided one by one."""

    CAPABILITY_OPS = {"LSTM", "GRU", "RNN", "ConvTranspose", "Cast", "ArgMax", "ArgMin", "BatchNormalization"}

    def __init__(self, index: GraphIndex, target: str, ort_version: str | None = None, rejects: Rejects | None = None,
                 reject_ops: set[str] | None = None, optimization: str = "all", tables: Tables | None = None):
        if optimization not in OPTIMIZATION_LEVELS:
            raise ValueError(f"optimization must be one of {', '.join(OPTIMIZATION_LEVELS)}, not {optimization!r}")
        self.index = index
        self.target = target
        self.optimization = optimization
        if tables is None:
            self.tables, self.version, self.notes = resolve_tables(target, ort_version)
        else:
            self.tables, self.version, self.notes = tables
        self.rejects: Rejects = rejects or (lambda node, target: None)  # (node, target) -> detail str if EP rejects node
        # ops rejects() may refuse; None = any op (then nothing is shared between nodes)
        self.reject_ops = reject_ops if rejects is not None else set()
        self._by_signature: dict[tuple[Any, ...], tuple[str | None, str, str | None, str]] = {}
        self.opt: Optimized | None = None

    def run(self) -> Placement:
        view = node_args.scoped_view(self.index)
        if view is not None:
            # bodies that reuse value names: placed on a view with those names made distinct, as ORT's
            # per-graph NodeArgs keep them, and handed back in the model's own nodes and names
            inner = Simulator(view.index, self.target, self.version, self.rejects, self.reject_ops, self.optimization,
                              (self.tables, self.version, self.notes))
            pl = view.restore(inner.run(), self.index)
            self.opt = inner.opt
            return pl
        pl = Placement(self.target, self.version, {ep: t.ort_version for ep, t in self.tables.items()}, self.notes,
                       optimization=self.optimization)
        preferred = TARGET_EPS[self.target][0]
        refused = model_load.refuses_model(self.index.model, self.version)
        if refused:
            reason, message = refused
            pl.refused = message
            first = True
            for node in self.index.nodes:
                if node.op_type == "Constant" and node.domain == "ai.onnx":
                    continue
                pl.record(node.index, NodePlacement(node, None, "refused" if first else "skipped", reason if first else None,
                                                    message if first else ""))
                first = False
            return pl
        if self.optimization != "disabled":
            cpu = self.tables.get(CPU)
            self.opt = optimize(self.index, self.optimization, self._cpu_kernel_for_folding if cpu is not None else None,
                                ort_version=self.version)
        removed = self.opt.removed if self.opt else {}
        expanded_subgraphs: set[int] = set()
        for node in self.index.nodes:
            if node.op_type == "Constant" and node.domain == "ai.onnx":
                continue  # ORT turns Constant nodes into initializers
            if self.index.is_local_function(node):
                continue  # ORT inlines model-local functions; their bodies are placed instead
            owner = node.scope.owner
            if owner is not None and owner.index in expanded_subgraphs:
                expanded_subgraphs.add(node.index)
                pl.record(node.index, NodePlacement(node, None, "expanded", "function",
                                                    f"inside {owner.op_type}, which ORT expands into its function body"))
                continue
            r = removed.get(node.index)
            if r is not None:
                pl.record(node.index, NodePlacement(node, None, r.status, r.reason, r.detail))
                continue
            p = self._assign_shared(node, preferred)
            if p.status == "expanded":
                expanded_subgraphs.add(node.index)
            pl.record(node.index, p)
        if preferred == CUDA:
            for scope in self.index.scopes:
                cpu_preferred.assign(scope, pl, self.opt, self.version)
        if self.opt is not None:
            line = self.opt.evaluations.summary("constant folding (onnxlint's model of ORT's)")
            if line:  # said once per model: a budget of work, not a defect of the model
                pl.notes = [*pl.notes, f"{line}; what they compute is taken as unknown"]
            self.opt.release()  # the optimizer model is not asked again: drop it now
        rewired = insert_cast_transformer.remove_duplicate_casts(pl, self.index, self.opt)  # every level
        if len(self.tables) > 1:
            # one provider: every tensor stays where it is, no Memcpy
            memcpy.insert_boundaries(pl, self.index, self.opt, rewired)
        return pl

    # -------------------------------------------------------------- kernel assignment
    def _bind(self, node: NodeRef, table: kernels.KernelTable,
              fp16_as_float: bool = False) -> Callable[[Iterable[str]], dict[str, str]]:
        return bind_types(node, table, fp16_as_float)

    def _cpu_kernel_for_folding(self, node: NodeRef) -> bool:
        """ConstantFolding runs the node with a CPU kernel for its exact types: the float16->float Casts ORT's
        InsertCastTransformer adds come later (measured: a float16 ReduceMax-20 of constants is not folded on
        1.24.4 and runs on CPU)."""
        match = self._lookup(node, CPU)
        return match.ok and match.reason != "fp16-cast"

    def _lookup(self, node: NodeRef, ep: str) -> kernels.KernelMatch:
        table = self.tables[ep]
        short = kernels.EP_SHORT[ep]
        if not table.has_domain(node.domain):
            if node.domain in STANDARD_DOMAINS:
                return kernels.KernelMatch(False, "not-registered", f"no {short} kernel for any {node.domain} op")
            if node.domain in ORT_DOMAINS:
                return kernels.KernelMatch(False, "contrib-op", f"{node.domain}::{node.op_type} is a contrib op with no {short} kernel")
            return kernels.KernelMatch(False, "custom-domain", f"no provider registers domain '{node.domain}' (needs a custom-op library)")
        since = schema_registry.since_version(node.op_type, node.opset, node.domain)
        if since is None:
            since = node.opset if node.opset is not None else 1
        match = table.lookup(node.domain, node.op_type, since, self._bind(node, table))
        if not match.ok and match.reason == "dtype" and ep == CPU and any(
                node.scope.type_of(v).type_str == "tensor(float16)" for v in (*node.inputs, *node.outputs) if v):
            # ORT's InsertCastTransformer wraps float16 nodes that have only a float CPU kernel in Casts
            widened = table.lookup(node.domain, node.op_type, since, self._bind(node, table, fp16_as_float=True))
            if widened.ok:
                return kernels.KernelMatch(True, "fp16-cast", "ORT inserts Casts float16<->float around this CPU node")
        if not match.ok and match.reason == "not-registered" and node.domain not in STANDARD_DOMAINS:
            return kernels.KernelMatch(False, "contrib-op", f"{node.domain}::{node.op_type} is a contrib op with no {short} kernel")
        if match.ok and ep == CUDA:
            refused = cuda_capability.cuda_refusal(node, since)
            if refused:
                return kernels.KernelMatch(False, "capability", f"CUDA GetCapability refuses it: {refused}")
            rejected = self.rejects(node, "ort-cuda")
            if rejected:
                return kernels.KernelMatch(False, "attribute", rejected)
        return match

    def _assign_shared(self, node: NodeRef, preferred: str) -> NodePlacement:
        if self.reject_ops is None or node.op_type in self.reject_ops or node.op_type in self.CAPABILITY_OPS:
            return self._assign(node, preferred)
        key = self.index.signature(node)
        hit = self._by_signature.get(key)
        if hit is None:
            p = self._assign(node, preferred)
            self._by_signature[key] = hit = (p.ep, p.status, p.reason, p.detail)
        return NodePlacement(node, *hit)

    def _assign(self, node: NodeRef, preferred: str) -> NodePlacement:
        first: kernels.KernelMatch | None = None
        for ep in self.tables:
            m = self._lookup(node, ep)
            if first is None:
                first = m
            if m.ok:
                if ep == preferred:
                    if ep == CUDA:
                        failure = cuda_capability.cuda_kernel_init_failure(node)
                        if failure:
                            return NodePlacement(node, None, "unsupported", "kernel-init", failure)
                    return NodePlacement(node, ep, "device")
                return NodePlacement(node, ep, "fallback", first.reason, first.detail)
        if schema_registry.has_function(node.op_type, node.opset, node.domain):
            return self._expand(node, preferred)
        detail = first.detail if first else "no kernel"
        if len(self.tables) > 1 and first is not None and first.reason not in ("custom-domain",):
            cpu = self._lookup(node, CPU)
            detail = f"{first.detail}; CPU: {cpu.detail}"
        return NodePlacement(node, None, "unsupported", first.reason if first else "not-registered", detail)

    # -------------------------------------------------------------- function expansion
    def _expand(self, node: NodeRef, preferred: str) -> NodePlacement:
        """No EP has a kernel: ORT inlines the op's ONNX function body (for the model's opset, built for the
        node's input types when the body depends on them) and places each body node."""
        body = expand_function(node)
        if body is None:
            missing = function_body_gaps(node, self.tables)
            if not missing:
                return NodePlacement(node, preferred, "expanded", "function",
                                     f"no kernel; ORT expands {node.op_type} into its ONNX function body")
            return NodePlacement(node, None, "unsupported", "function-body",
                                 f"no kernel for {node.op_type}, and its ONNX function body uses {', '.join(missing)}"
                                 " which no provider has")
        if not body.graph.node:
            return NodePlacement(node, None, "unsupported", "function-body",
                                 f"no kernel for {node.op_type}, and ONNX defines no function body for opset {node.opset}:"
                                 " ORT refuses the model")
        sub = Simulator(GraphIndex(body), self.target, self.version, self.rejects, self.reject_ops, "disabled",
                        (self.tables, self.version, self.notes)).run()
        unsup = [p for p in sub.nodes.values() if p.status == "unsupported"]
        if unsup and CUDA in self.tables and all("bfloat16 not supported" in p.detail for p in unsup):
            # the body comes from the installed onnx; the one compiled into ORT may differ (seen for Attention in
            # bfloat16, which ORT 1.24 runs): not enough to call the model unloadable
            return NodePlacement(node, CPU, "expanded", "function-cpu",
                                 f"no kernel for {node.op_type}; ORT expands it into its ONNX function body, whose bfloat16 nodes "
                                 f"may have no kernel ({', '.join(sorted({p.node.op_type for p in unsup}))})")
        if unsup:
            what = ", ".join(sorted({f"{p.node.op_type} ({p.detail})" for p in unsup}))
            return NodePlacement(node, None, "unsupported", "function-body",
                                 f"no kernel for {node.op_type}; ORT expands it into its ONNX function body, and no provider runs {what}")
        off = [p for p in sub.nodes.values() if p.ep != preferred and p.status not in ("deliberate", *GONE_STATUSES)]
        if off:
            what = ", ".join(sorted({f"{p.node.op_type}: {p.detail}" for p in off}))
            return NodePlacement(node, off[0].ep, "expanded", "function-cpu",
                                 f"no kernel for {node.op_type}; ORT expands it into its ONNX function body, and part of it"
                                 f" runs on CPU ({what})")
        return NodePlacement(node, preferred, "expanded", "function",
                             f"no kernel; ORT expands {node.op_type} into its ONNX function body")


def simulate(index: GraphIndex, target: str, ort_version: str | None = None, rejects: Rejects | None = None,
             reject_ops: set[str] | None = None, optimization: str = "all") -> Placement:
    """Placement of every node by ORT `ort_version` for `target`, after ORT's Level-1 graph optimizations at
    `optimization` (disabled | basic | all; ORT's default session options are all)."""
    return Simulator(index, target, ort_version, rejects, reject_ops, optimization).run()


def bind_types(node: NodeRef, table: kernels.KernelTable,
               fp16_as_float: bool = False) -> Callable[[Iterable[str]], dict[str, str]]:
    """The binder a kernel lookup asks: type parameter names -> the node's dtype strings, through the op schema's
    formal parameters (else the table's own for an op onnx has no schema of). fp16_as_float: float16 seen as float
    (the Casts InsertCastTransformer adds around a CPU node)."""
    def bind(params: Iterable[str]) -> dict[str, str]:
        wanted = set(params)
        formal = schema_registry.formal_params(node.op_type, node.opset, node.domain)
        if formal is None:
            p = table.params.get(node.domain, {}).get(node.op_type)
            if not p:
                return {}
            formal = ([(n, t, False) for n, t in p["inputs"]], [(n, t, False) for n, t in p["outputs"]])
        out: dict[str, str] = {}
        for kind, formals in (("in", formal[0]), ("out", formal[1])):
            names = node.inputs if kind == "in" else node.outputs
            for i, value in enumerate(names):
                if not value or not formals:
                    continue
                name, type_str, variadic = formals[min(i, len(formals) - 1)]
                if i >= len(formals) and not variadic:
                    continue
                if type_str in wanted and type_str not in out:
                    vt = node.scope.type_of(value)
                    if vt.type_str:
                        out[type_str] = "tensor(float)" if fp16_as_float and vt.type_str == "tensor(float16)" else vt.type_str
        return out

    return bind
