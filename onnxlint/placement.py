"""Static simulation of ORT's node placement for a list of execution providers.

Mirrors what ORT does at session creation: each EP in priority order claims the nodes it has a kernel for
(op, domain, since-version, bound type constraints; CUDA also rejects some attribute combinations in
GetCapability), then GetCpuPreferredNodes moves small shape computations that only feed on CPU tensors back
to CPU on purpose. The partition then implies where Memcpy nodes are inserted.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import lru_cache

import onnx

from onnxlint import kernels, ort_capability, ort_optimizer, resources, schemas
from onnxlint.graph import ORT_DOMAINS, STANDARD_DOMAINS, GraphIndex, NodeRef, StatusIndex

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
TARGET_EPS = {"ort-cuda": [CUDA, CPU], "ort-cpu": [CPU], "ort-trt": ["TensorrtExecutionProvider", CUDA, CPU]}
# the vocabulary of verdicts rules may name (`placement: {status: ..., reason: ...}`)
HALF_TYPES = {"float16", "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"}
SMALL_INITIALIZER = 100  # kSmallInitializerThreshold in fallback_cpu_capability.cc
# Every status and reason a NodePlacement can carry (the target registry validates rule files against these).
#   device: on the target's preferred EP | fallback: the preferred EP has no kernel or refuses it, another EP runs it
#   deliberate: GetCpuPreferredNodes put a small shape computation on CPU on purpose
#   unsupported: no EP can run it, ORT refuses the session | expanded: no kernel, ORT inlines its ONNX function body
#   folded / eliminated: a Level-1 graph transformer removes the node before partitioning (not a finding)
#   refused: ORT refuses the whole model (opset / IR version too new), reported once, on the first node
#   skipped: not placed because ORT refuses the model
STATUSES = ("device", "fallback", "deliberate", "unsupported", "expanded", "folded", "eliminated", "refused", "skipped")
GONE_STATUSES = ("expanded", "folded", "eliminated")  # the node does not exist in ORT's partitioned graph
# for Memcpy boundaries an expanded node stands for its function body, on the provider that body runs on
_REMOVED = ("folded", "eliminated")
REASONS = (
    # kernel lookup
    "not-registered", "opset", "dtype", "contrib-op", "custom-domain", "fp16-cast",
    # the preferred EP has a kernel but refuses the node: GetCapability (capability) or a rule file (attribute)
    "capability", "attribute", "kernel-init",
    # GetCpuPreferredNodes
    "cpu-preferred",
    # function expansion
    "function", "function-cpu", "function-body",
    # Level-1 graph transformers (ort_optimizer)
    "constant-folding", "shape-folding", "cse", "identity", "dropout", "cast", "noop", "slice", "expand", "fusion",
    "if-constant",
    # the whole model
    "model-opset", "model-ir",
)
OPTIMIZATION_LEVELS = ort_optimizer.LEVELS
DTYPE_BYTES = {"float": 4, "float16": 2, "bfloat16": 2, "double": 8, "int64": 8, "int32": 4, "int16": 2, "int8": 1,
               "uint64": 8, "uint32": 4, "uint16": 2, "uint8": 1, "bool": 1}


@dataclass
class NodePlacement:
    node: NodeRef
    ep: str | None
    status: str  # one of STATUSES
    reason: str | None = None
    detail: str = ""

    @property
    def deliberate(self) -> bool:
        return self.status == "deliberate"


@dataclass
class Boundary:
    value: str
    direction: str  # to-host | to-device
    producer: NodeRef | None
    consumer: NodeRef
    bytes: int | None


@dataclass
class Placement(StatusIndex):
    COMMON = "device"

    target: str
    ort_version: str
    table_versions: dict[str, str]
    notes: list[str]
    nodes: dict[int, NodePlacement] = field(default_factory=dict)
    boundaries: list[Boundary] = field(default_factory=list)
    optimization: str = "all"
    refused: str | None = None  # why ORT refuses the whole model at this version, if it does

    def get(self, node: NodeRef) -> NodePlacement | None:
        return self.nodes.get(node.index)

    def summary(self) -> dict:
        counts = dict.fromkeys(STATUSES, 0)
        for p in self.nodes.values():
            counts[p.status] += 1
        known = [b.bytes for b in self.boundaries if b.bytes is not None]
        preferred = TARGET_EPS[self.target][0]
        return {
            "preferred_ep": preferred,
            "nodes": len(self.nodes),
            "on_preferred_ep": counts["device"] + counts["expanded"],
            "fallback": counts["fallback"] + counts["deliberate"],
            "real_fallback": counts["fallback"],
            "shape_only": counts["deliberate"],
            "unsupported": counts["unsupported"],
            "folded": counts["folded"],
            "eliminated": counts["eliminated"],
            "optimization": self.optimization,
            "refused": self.refused,
            "boundaries": len(self.boundaries),
            "bytes_copied": sum(known) if known else 0,
            "bytes_unknown": len(self.boundaries) - len(known),
        }

    def summary_line(self) -> str:
        s = self.summary()
        ep = {CUDA: "CUDA", CPU: "CPU"}.get(s["preferred_ep"], s["preferred_ep"])
        mb = s["bytes_copied"] / 1e6
        copied = f"~{mb:.2f} MB copied per run" + (f" (+{s['bytes_unknown']} of unknown size)" if s["bytes_unknown"] else "")
        line = (f"{s['on_preferred_ep']} nodes on {ep}, {s['fallback']} fall back ({s['real_fallback']} real, "
                f"{s['shape_only']} shape-only), {s['boundaries']} boundaries, {copied}")
        if s["unsupported"]:
            line += f", {s['unsupported']} with no provider"
        if s["folded"] or s["eliminated"]:
            line += f"; {s['folded']} folded and {s['eliminated']} eliminated by ORT's graph optimizations ({self.optimization})"
        if self.refused:
            line = f"ORT refuses this model: {self.refused}"
        return line


def _mixed_body(p) -> bool:
    """An expanded function whose body runs partly on CPU: which of its edges cross is not known here."""
    return p.status == "expanded" and p.reason != "function"


def _bytes(scope, value: str) -> int | None:
    """What one copy of value moves, when its dtype and shape are known."""
    vt = scope.type_of(value)
    n = vt.numel()
    return n * DTYPE_BYTES[vt.dtype] if n is not None and vt.dtype in DTYPE_BYTES else None


@lru_cache(maxsize=1)
def cuda_memory() -> dict:
    import json  # JSON, not YAML: read in every process, and yaml's import costs ~25 ms

    data: dict = json.loads((resources.data_dir() / "ort-cuda-memory.json").read_text())
    return data


@lru_cache(maxsize=None)
def cpu_inputs(op: str, since: int | None) -> frozenset[int]:
    spec = cuda_memory()["cpu_inputs"].get(op)
    if not spec:
        return frozenset()
    if since is not None and since < spec.get("since", 0):
        return frozenset()
    return frozenset(spec["inputs"])


@lru_cache(maxsize=None)
def cpu_outputs(op: str) -> frozenset[int]:
    return frozenset(cuda_memory()["cpu_outputs"].get(op, []))


def resolve_tables(target: str, ort_version: str | None) -> tuple[dict[str, kernels.KernelTable], str, list[str]]:
    """Kernel tables for the target's EPs at the requested ORT version, with notes on any substitution."""
    requested = ort_version or kernels.installed_ort_version()
    eps = [ep for ep in TARGET_EPS[target] if ep in kernels.EP_SHORT]
    versions, note = kernels.resolve([kernels.EP_SHORT[ep] for ep in eps], requested)  # one note per version
    tables = {ep: kernels.load(kernels.EP_SHORT[ep], versions[kernels.EP_SHORT[ep]]) for ep in eps}
    return tables, requested or versions.get("cpu", ""), [note] if note else []


class Simulator:
    """Nodes with the same signature (domain, op, opset, value types) get the same kernel, so each signature is
    looked up once; only nodes a rejects() rule or a GetCapability check may look at are decided one by one."""

    CAPABILITY_OPS = {"LSTM", "GRU", "RNN", "ConvTranspose", "Cast", "ArgMax", "ArgMin", "BatchNormalization"}

    def __init__(self, index: GraphIndex, target: str, ort_version: str | None = None, rejects=None,
                 reject_ops: set[str] | None = None, optimization: str = "all", tables=None):
        if optimization not in OPTIMIZATION_LEVELS:
            raise ValueError(f"optimization must be one of {', '.join(OPTIMIZATION_LEVELS)}, not {optimization!r}")
        self.index = index
        self.target = target
        self.optimization = optimization
        if tables is None:
            self.tables, self.version, self.notes = resolve_tables(target, ort_version)
        else:
            self.tables, self.version, self.notes = tables
        self.rejects = rejects or (lambda node, target: None)  # (node, target) -> detail str if EP rejects node
        # ops rejects() may refuse; None = any op (then nothing is shared between nodes)
        self.reject_ops = reject_ops if rejects is not None else set()
        self._by_signature: dict[tuple, tuple] = {}
        self.opt: ort_optimizer.Optimized | None = None

    def run(self) -> Placement:
        pl = Placement(self.target, self.version, {ep: t.ort_version for ep, t in self.tables.items()}, self.notes,
                       optimization=self.optimization)
        preferred = TARGET_EPS[self.target][0]
        refused = ort_capability.refuses_model(self.index.model, self.version)
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
            self.opt = ort_optimizer.optimize(self.index, self.optimization,
                                              self._cpu_kernel_for_folding if cpu is not None else None,
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
                self._cpu_preferred(scope, pl)
        if self.opt is not None:
            self.opt.release()  # the optimizer model is not asked again: drop it now
        if len(self.tables) > 1:
            self._boundaries(pl)  # one provider: every tensor stays where it is, no Memcpy
        return pl

    # -------------------------------------------------------------- kernel assignment
    def _bind(self, node: NodeRef, table: kernels.KernelTable, fp16_as_float: bool = False):
        def bind(params):
            wanted = set(params)
            formal = schemas.formal_params(node.op_type, node.opset, node.domain)
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
        since = schemas.since_version(node.op_type, node.opset, node.domain)
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
            refused = ort_capability.cuda_refusal(node, since)
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
                        failure = ort_capability.cuda_kernel_init_failure(node)
                        if failure:
                            return NodePlacement(node, None, "unsupported", "kernel-init", failure)
                    return NodePlacement(node, ep, "device")
                return NodePlacement(node, ep, "fallback", first.reason, first.detail)
        if schemas.has_function(node.op_type, node.opset, node.domain):
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
            missing = self._function_body_gaps(node)
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

    def _function_body_gaps(self, node: NodeRef) -> list[str]:
        """Ops of the function body (for the opset in effect) that no EP registers at their since-version.

        Used when the body cannot be instantiated for the node's types; then only op and version are checked."""
        s = schemas.get_schema(node.op_type, node.opset, node.domain)
        body = None
        try:
            body = s.get_function_with_opset_version(node.opset) if node.opset else s.function_body
            if isinstance(body, bytes):
                body = onnx.FunctionProto.FromString(body)
        except Exception:
            body = None
        if body is None or not body.node:
            return []  # context-dependent body: cannot be expanded without ORT's type context
        gaps = []
        for inner in body.node:
            if inner.op_type == "Constant":
                continue  # becomes an initializer
            dom = inner.domain or "ai.onnx"
            since = schemas.since_version(inner.op_type, node.opset, dom)
            ok = any(table.rows_for(dom, inner.op_type, since) for table in self.tables.values())
            if not ok and not schemas.has_function(inner.op_type, node.opset, dom):
                gaps.append(f"{inner.op_type}-{since}")  # function ops inside the body are expanded in turn
        return sorted(set(gaps))

    # -------------------------------------------------------------- after graph optimizations
    def _resolve(self, value: str) -> str:
        return self.opt.resolve(value) if self.opt is not None and value else value

    def _folded(self, value: str) -> bool:
        return self.opt is not None and value in self.opt.constants

    # -------------------------------------------------------------- GetCpuPreferredNodes
    def _cpu_preferred(self, scope, pl: Placement) -> None:
        nodes = pl.nodes
        seeds = []  # CPU-resident outputs of CUDA nodes (Shape, Size, ...): where shape subgraphs start
        for n in scope.nodes:
            p = nodes.get(n.index)
            if p is None or p.ep != CUDA or p.status != "device":
                continue
            for i in cpu_outputs(n.op_type):
                if i < len(n.outputs) and n.outputs[i]:
                    seeds.append(n.outputs[i])
        if not seeds:
            return  # nothing can be CPU-preferred without a CPU tensor to start from
        # GraphViewer's order of the graph ORT partitions (after the Level-1 transformers): the candidate queue
        # pops nodes by it, and a node is judged once, so a producer moved by CSE must come first
        order = self.opt.orders.get(id(scope)) if self.opt is not None else None
        if order is None:
            order = ort_optimizer.ort_topological_order(scope, self.opt)
        pos = {n.index: i for i, n in enumerate(order)}
        cpu_args: set[str] = set()
        heap: list[tuple[int, int]] = []
        consumers: dict[str, list] = {}
        alias, resolve = (self.opt.alias if self.opt is not None else {}), self._resolve
        for n in scope.nodes:
            for v in n.inputs:
                if v:
                    consumers.setdefault(resolve(v) if v in alias else v, []).append(n)

        def push_consumers(value):
            for c in consumers.get(value, ()):
                if c.index in pos:
                    heapq.heappush(heap, (pos[c.index], c.index))

        for value in seeds:
            cpu_args.add(value)
            push_consumers(value)
        visited: set[int] = set()
        by_index = {n.index: n for n in order}
        while heap:
            _, idx = heapq.heappop(heap)
            if idx in visited:
                continue
            visited.add(idx)
            node = by_index[idx]
            p = pl.nodes.get(idx)
            if p is not None and p.status == "expanded" and scope.parent is None and self._expanded_is_cpu_in_first_pass():
                # GetCpuPreferredNodes treats a node no EP has a kernel for as a CPU node (its outputs are CPU
                # tensors) when the partitioner sees it before inlining its function body: measured so on 1.24.4
                # in main graphs (not in control-flow bodies), not on 1.31.1
                for out in node.outputs:
                    cpu_args.add(out)
                    push_consumers(out)
                continue
            if p is None or p.status in GONE_STATUSES:
                continue
            if p.ep != CUDA:
                if p.ep in (CPU, None):
                    for out in node.outputs:
                        cpu_args.add(out)
                        push_consumers(out)
                continue
            if p.status != "device":
                continue
            since = schemas.since_version(node.op_type, node.opset, node.domain)
            on_cpu = cpu_inputs(node.op_type, since)
            place = True
            for i, value in enumerate(node.inputs):
                vt = scope.type_of(value) if value else None
                if vt is not None and vt.dtype in HALF_TYPES:
                    place = False
                    break
                if value in alias:
                    value = resolve(value)
                if value and (self._small_initializer(scope, value) or scope.is_graph_input(value) or self._outer(scope, value)):
                    continue
                if not value or value not in cpu_args:
                    place = False
                    break
                if i in on_cpu:
                    place = False
                    break
            if place:
                pl.record(idx, NodePlacement(node, CPU, "deliberate", "cpu-preferred",
                                             "ORT runs this small shape computation on CPU on purpose (inputs are CPU tensors)"))
                for out in node.outputs:
                    cpu_args.add(out)
                    push_consumers(out)

    def _expanded_is_cpu_in_first_pass(self) -> bool:
        rel = kernels.release(self.version)
        return rel is not None and rel <= (1, 30)

    def _outer(self, scope, value: str) -> bool:
        """A value of an enclosing graph (an implicit input of a control-flow body)."""
        if scope.parent is None or value in scope.producer or value in scope.initializers or value in scope.constants:
            return False
        return value not in scope.inputs

    def _small_initializer(self, scope, value: str) -> bool:
        if self._folded(value):
            vt = scope.type_of(value)
            n = vt.numel()
            if n is None and self.opt is not None:
                shp = self.opt.shapes.get(value)
                if (shp is None or not all(isinstance(d, int) for d in shp)) and self.opt.sizer is not None:
                    shp = self.opt.sizer(scope, value)  # learnt again after folding, as ORT does
                if shp is not None and all(isinstance(d, int) for d in shp):
                    n = 1
                    for d in shp:
                        n *= d
            return n is not None and n <= SMALL_INITIALIZER
        t = ort_optimizer.constant_tensor(scope, value)
        if t is None:
            return False
        n = 1
        for d in t.dims:
            n *= d
        return n <= SMALL_INITIALIZER

    # -------------------------------------------------------------- Memcpy boundaries
    def _boundaries(self, pl: Placement) -> None:
        """Memcpy nodes as ORT's MemcpyTransformer (transformer_memcpy.cc) inserts them: one per value a node
        on one side produces and a node on the other side reads (a CUDA kernel's host-memory inputs and outputs
        count as host side). A graph's own input, or an outer value a body reads, gets one only when host-side
        and device-side readers share it; otherwise the session copies it in (CopyInputsAcrossDevices).
        Initializers never do: ORT duplicates them per device."""
        seen: set[tuple[str, str]] = set()
        # scope id -> value -> [host-side reader, device-side reader] for the scope's inputs and outer values
        fed: dict[int, dict[str, list]] = {}
        # the branch of an If ORT inlined (constant condition) runs in the graph around it: its producers are
        # looked up there too (an overlay: the enclosing graph's own map may hold a million entries)
        merged: dict[int, dict] = {}
        for sc in self.index.scopes:
            eff = self._effective(sc)
            if eff is not sc:
                merged.setdefault(id(eff), {}).update(sc.producer)
        # read once here, not per input (a million inputs at 1M nodes)
        alias = self.opt.alias if self.opt is not None else {}
        folded = self.opt.constants if self.opt is not None else set()
        resolve = self._resolve
        for p in pl.nodes.values():
            node = p.node
            if p.ep is None or p.status in _REMOVED or _mixed_body(p):
                continue
            since = schemas.since_version(node.op_type, node.opset, node.domain) if p.ep == CUDA else None
            host_inputs = cpu_inputs(node.op_type, since) if p.ep == CUDA else frozenset()
            scope = self._effective(node.scope) if merged else node.scope
            producer, inlined = scope.producer, merged.get(id(scope))
            for i, value in enumerate(node.inputs):
                if value in alias:
                    value = resolve(value)
                if value in folded:
                    continue  # an initializer now: copied by the session state, not a Memcpy node
                prod = producer.get(value)
                if prod is None and inlined:
                    prod = inlined.get(value)
                if prod is None:
                    if value and node.scope.constant(value) is None:
                        side = fed.setdefault(id(scope), {}).setdefault(value, [None, None])
                        k = 0 if (p.ep == CPU or i in host_inputs) else 1
                        side[k] = side[k] or node
                    continue  # an initializer: duplicated per device by ORT, never a Memcpy node
                pp = pl.nodes.get(prod.index)
                if pp is None or pp.ep is None or pp.status in _REMOVED or _mixed_body(pp):
                    continue  # Constant nodes become initializers; a body on both providers: unknown edges
                src_host = pp.ep == CPU or (pp.ep == CUDA and prod.outputs.index(value) in cpu_outputs(prod.op_type))
                dst_host = p.ep == CPU or i in host_inputs
                if src_host == dst_host:
                    continue
                direction = "to-device" if src_host else "to-host"
                if (value, direction) in seen:
                    continue
                seen.add((value, direction))
                pl.boundaries.append(Boundary(value, direction, prod, node, _bytes(node.scope, value)))
        for values in fed.values():
            for value, (host_reader, device_reader) in values.items():
                if host_reader is not None and device_reader is not None:
                    pl.boundaries.append(Boundary(value, "to-device", None, device_reader, _bytes(device_reader.scope, value)))

    def _effective(self, scope):
        """The graph a scope's nodes run in: an If branch ORT inlined runs in the graph around the If."""
        while scope.parent is not None and scope.owner is not None and self.opt is not None:
            gone = self.opt.removed.get(scope.owner.index)
            if gone is None or gone.reason != "if-constant":
                break
            scope = scope.parent
        return scope





def _type_proto(vt) -> onnx.TypeProto | None:
    if not vt.type_str or not vt.type_str.startswith("tensor("):
        return None
    elem = _ELEM.get(vt.dtype)
    if elem is None:
        return None
    shape = vt.shape
    return onnx.helper.make_tensor_type_proto(elem, None if shape is None else [d if isinstance(d, int) else None for d in shape])


_ELEM = {onnx.helper.tensor_dtype_to_string(t).replace("TensorProto.", "").lower(): t
         for t in onnx.TensorProto.DataType.values() if t}


def expand_function(node: NodeRef) -> onnx.ModelProto | None:
    """The node's ONNX function body as a model (inputs typed like the node's), inlined and shape-inferred, as
    ORT expands it when no provider has a kernel; an empty graph when ONNX defines no body for the node's opset;
    None when the body cannot be built here (unknown input types, nested functions)."""
    schema = schemas.get_schema(node.op_type, node.opset, node.domain)
    if schema is None or node.opset is None:
        return None
    in_types = [_type_proto(node.scope.type_of(v)) if v else None for v in node.inputs]
    try:
        if schema.has_context_dependent_function:
            if any(t is None for v, t in zip(node.inputs, in_types) if v):
                return None
            raw = schema.get_context_dependent_function_with_opset_version(
                node.opset, node.proto.SerializeToString(), [t.SerializeToString() if t is not None else b"" for t in in_types])
        elif schema.has_function:
            if node.opset < min(schema.function_opset_versions or [0]):
                return onnx.ModelProto(graph=onnx.GraphProto())
            raw = schema.get_function_with_opset_version(node.opset)
        else:
            return None
        fn = onnx.FunctionProto.FromString(raw) if isinstance(raw, bytes) else raw
        if fn is None or not fn.node:
            return None
        fn.domain = node.proto.domain
        fn.name = node.op_type
        del fn.opset_import[:]
        fn.opset_import.extend([onnx.helper.make_opsetid("", node.opset)])
        call = onnx.NodeProto()
        call.CopyFrom(node.proto)
        del call.input[:]
        del call.output[:]
        call.input.extend([f"in{i}" if v else "" for i, v in enumerate(node.inputs)])
        call.output.extend([f"out{i}" if v else "" for i, v in enumerate(node.outputs)])
        inputs = [onnx.helper.make_value_info(f"in{i}", t) for i, (v, t) in enumerate(zip(node.inputs, in_types)) if v and t is not None]
        if len(inputs) != sum(1 for v in node.inputs if v):
            return None
        outputs = [onnx.helper.make_empty_tensor_value_info(f"out{i}") for i, v in enumerate(node.outputs) if v]
        opsets = [onnx.helper.make_opsetid("", node.opset)]
        if node.proto.domain not in ("", "ai.onnx"):
            opsets.append(onnx.helper.make_opsetid(node.proto.domain, node.opset))
        model = onnx.helper.make_model(onnx.helper.make_graph([call], "expanded", inputs, outputs), opset_imports=opsets,
                                       functions=[fn], ir_version=10)
        from onnx import inliner

        inlined = inliner.inline_local_functions(model)
        return onnx.shape_inference.infer_shapes(inlined, check_type=False, strict_mode=False)
    except Exception:  # noqa: BLE001 - onnx cannot build this body: fall back to the op-level check
        return None


def simulate(index: GraphIndex, target: str, ort_version: str | None = None, rejects=None,
             reject_ops: set[str] | None = None, optimization: str = "all") -> Placement:
    """Placement of every node by ORT `ort_version` for `target`, after ORT's Level-1 graph optimizations at
    `optimization` (disabled | basic | all; ORT's default session options are all)."""
    return Simulator(index, target, ort_version, rejects, reject_ops, optimization).run()
