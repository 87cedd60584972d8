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
import yaml

from onnxlint import kernels, resources, schemas
from onnxlint.graph import GraphIndex, NodeRef, ORT_DOMAINS, STANDARD_DOMAINS, StatusIndex, topo_order

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
TARGET_EPS = {"ort-cuda": [CUDA, CPU], "ort-cpu": [CPU], "ort-trt": ["TensorrtExecutionProvider", CUDA, CPU]}
HALF_TYPES = {"float16", "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"}
SMALL_INITIALIZER = 100  # kSmallInitializerThreshold in fallback_cpu_capability.cc
DTYPE_BYTES = {"float": 4, "float16": 2, "bfloat16": 2, "double": 8, "int64": 8, "int32": 4, "int16": 2, "int8": 1,
               "uint64": 8, "uint32": 4, "uint16": 2, "uint8": 1, "bool": 1}


@dataclass
class NodePlacement:
    node: NodeRef
    ep: str | None
    status: str  # device | fallback | deliberate | unsupported | expanded
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

    def get(self, node: NodeRef) -> NodePlacement | None:
        return self.nodes.get(node.index)

    def summary(self) -> dict:
        counts = {"device": 0, "fallback": 0, "deliberate": 0, "unsupported": 0, "expanded": 0}
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
        return line


@lru_cache(maxsize=1)
def cuda_memory() -> dict:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: this file is read per process
    return yaml.load((resources.data_dir() / "ort-cuda-memory.yaml").read_text(), Loader=loader)


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
    notes, tables, used = [], {}, {}
    for ep in TARGET_EPS[target]:
        short = kernels.EP_SHORT.get(ep)
        if short is None:
            continue
        version, exact = kernels.nearest(short, requested)
        if not exact:
            why = f"requested {requested}" if requested else "no onnxruntime installed"
            notes.append(f"{short.upper()} kernel table of ORT {version} used ({why}; nearest shipped)")
        tables[ep] = kernels.load(short, version)
        used[ep] = version
    return tables, requested or used.get(CPU, ""), notes


class Simulator:
    """Nodes with the same signature (domain, op, opset, value types) get the same kernel, so each signature is
    looked up once; only nodes a rejects() rule may look at (by attributes) are decided one by one."""

    def __init__(self, index: GraphIndex, target: str, ort_version: str | None = None, rejects=None,
                 reject_ops: set[str] | None = None):
        self.index = index
        self.target = target
        self.tables, self.version, self.notes = resolve_tables(target, ort_version)
        self.rejects = rejects or (lambda node, target: None)  # (node, target) -> detail str if EP rejects node
        # ops rejects() may refuse; None = any op (then nothing is shared between nodes)
        self.reject_ops = reject_ops if rejects is not None else set()
        self._by_signature: dict[tuple, tuple] = {}

    def run(self) -> Placement:
        pl = Placement(self.target, self.version, {ep: t.ort_version for ep, t in self.tables.items()}, self.notes)
        preferred = TARGET_EPS[self.target][0]
        for node in self.index.nodes:
            if node.op_type == "Constant" and node.domain == "ai.onnx":
                continue  # ORT turns Constant nodes into initializers
            if self.index.is_local_function(node):
                continue  # ORT inlines model-local functions; their bodies are placed instead
            pl.record(node.index, self._assign_shared(node, preferred))
        if preferred == CUDA:
            for scope in self.index.scopes:
                self._cpu_preferred(scope, pl)
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
        if not match.ok and match.reason == "dtype" and ep == CPU and "float16" in match.detail:
            # ORT's InsertCastTransformer wraps float16 nodes that have only a float CPU kernel in Casts
            widened = table.lookup(node.domain, node.op_type, since, self._bind(node, table, fp16_as_float=True))
            if widened.ok:
                return kernels.KernelMatch(True, "fp16-cast", "ORT inserts Casts float16<->float around this CPU node")
        if not match.ok and match.reason == "not-registered" and node.domain not in STANDARD_DOMAINS:
            return kernels.KernelMatch(False, "contrib-op", f"{node.domain}::{node.op_type} is a contrib op with no {short} kernel")
        if match.ok and ep == CUDA:
            rejected = self.rejects(node, "ort-cuda")
            if rejected:
                return kernels.KernelMatch(False, "attribute", rejected)
        return match

    def _assign_shared(self, node: NodeRef, preferred: str) -> NodePlacement:
        if self.reject_ops is None or node.op_type in self.reject_ops:
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
                    return NodePlacement(node, ep, "device")
                return NodePlacement(node, ep, "fallback", first.reason, first.detail)
        if schemas.has_function(node.op_type, node.opset, node.domain):
            missing = self._function_body_gaps(node)
            if not missing:
                return NodePlacement(node, preferred, "expanded", "function",
                                     f"no kernel; ORT expands {node.op_type} into its ONNX function body")
            return NodePlacement(node, None, "unsupported", "function-body",
                                 f"no kernel for {node.op_type}, and its ONNX function body uses {', '.join(missing)} which no provider has")
        detail = first.detail if first else "no kernel"
        if len(self.tables) > 1 and first is not None and first.reason not in ("custom-domain",):
            cpu = self._lookup(node, CPU)
            detail = f"{first.detail}; CPU: {cpu.detail}"
        return NodePlacement(node, None, "unsupported", first.reason if first else "not-registered", detail)

    def _function_body_gaps(self, node: NodeRef) -> list[str]:
        """Ops of the function body (for the opset in effect) that no EP registers at their since-version.

        Dtypes inside the body are unknown here, so only op and version are checked."""
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

    # -------------------------------------------------------------- GetCpuPreferredNodes
    def _cpu_preferred(self, scope, pl: Placement) -> None:
        nodes = pl.nodes
        seeds = []  # CPU-resident outputs of CUDA nodes (Shape, Size, ...): where shape subgraphs start
        for n in scope.nodes:
            p = nodes.get(n.index)
            if p is None or p.ep != CUDA:
                continue
            for i in cpu_outputs(n.op_type):
                if i < len(n.outputs) and n.outputs[i]:
                    seeds.append(n.outputs[i])
        if not seeds:
            return  # nothing can be CPU-preferred without a CPU tensor to start from
        order = topo_order(scope)
        pos = {n.index: i for i, n in enumerate(order)}
        cpu_args: set[str] = set()
        heap: list[tuple[int, int]] = []

        def push_consumers(value):
            for c in scope.consumers.get(value, ()):
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
            if p is None:
                continue
            if p.ep != CUDA:
                if p.ep in (CPU, None):
                    for out in node.outputs:
                        cpu_args.add(out)
                        push_consumers(out)
                continue
            since = schemas.since_version(node.op_type, node.opset, node.domain)
            on_cpu = cpu_inputs(node.op_type, since)
            place = True
            for i, value in enumerate(node.inputs):
                vt = scope.type_of(value) if value else None
                if vt is not None and vt.dtype in HALF_TYPES:
                    place = False
                    break
                if value and (self._small_initializer(scope, value) or scope.is_graph_input(value)):
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

    @staticmethod
    def _small_initializer(scope, value: str) -> bool:
        t = scope.constant(value)
        if t is None:
            return False
        n = 1
        for d in t.dims:
            n *= d
        return n <= SMALL_INITIALIZER

    # -------------------------------------------------------------- Memcpy boundaries
    def _boundaries(self, pl: Placement) -> None:
        seen: set[tuple[str, str]] = set()
        for p in pl.nodes.values():
            node = p.node
            if p.ep is None:
                continue
            since = schemas.since_version(node.op_type, node.opset, node.domain) if p.ep == CUDA else None
            host_inputs = cpu_inputs(node.op_type, since) if p.ep == CUDA else set()
            producer = node.scope.producer
            for i, value in enumerate(node.inputs):
                prod = producer.get(value)
                if prod is None:
                    continue  # initializer, graph input or outer-scope value: copied in by the caller, not a Memcpy node
                pp = pl.nodes.get(prod.index)
                if pp is None or pp.ep is None:
                    continue  # Constant nodes become initializers
                src_host = pp.ep == CPU or (pp.ep == CUDA and prod.outputs.index(value) in cpu_outputs(prod.op_type))
                dst_host = p.ep == CPU or i in host_inputs
                if src_host == dst_host:
                    continue
                direction = "to-device" if src_host else "to-host"
                if (value, direction) in seen:
                    continue
                seen.add((value, direction))
                vt = node.scope.type_of(value)
                n = vt.numel()
                size = n * DTYPE_BYTES[vt.dtype] if n is not None and vt.dtype in DTYPE_BYTES else None
                pl.boundaries.append(Boundary(value, direction, prod, node, size))


def simulate(index: GraphIndex, target: str, ort_version: str | None = None, rejects=None,
             reject_ops: set[str] | None = None) -> Placement:
    return Simulator(index, target, ort_version, rejects, reject_ops).run()
