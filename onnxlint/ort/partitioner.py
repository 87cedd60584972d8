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

from onnxlint.model import local_functions
from onnxlint.model.graph import ORT_DOMAINS, STANDARD_DOMAINS, GraphIndex, NodeRef
from onnxlint.ort import (
    cpu_kernel_init,
    cpu_preferred,
    cuda_capability,
    insert_cast_transformer,
    memcpy,
    model_load,
    node_args,
    releases,
    schema_registry,
)
from onnxlint.ort import kernel_registry as kernels
from onnxlint.ort.function_expansion import expand_function, function_body_gaps
from onnxlint.ort.optimizer import dq_matmul_nbits_fusion, ensure_unique_dq_for_node_unit, gather_slice_fusion, nhwc_transformer
from onnxlint.ort.optimizer.graph_transformer_mgr import optimize
from onnxlint.ort.optimizer.optimized import LEVELS, Optimized
from onnxlint.ort.verdicts import CPU, CUDA, GONE_STATUSES, TARGET_EPS, CreatedNode, NodePlacement, Placement
from onnxlint.support.escape import field_text

OPTIMIZATION_LEVELS = LEVELS
Rejects = Callable[[NodeRef, str], "str | None"]  # (node, target) -> why the EP refuses the node (a rule file's), or None
# the kernel tables of the target's EPs, the version they stand for, notes on a substitution (resolve_tables)
Tables = tuple[dict[str, kernels.KernelTable], str, list[str]]


def resolve_tables(target: str, ort_version: str | None) -> Tables:
    """Kernel tables for the target's EPs at the requested ORT version, with notes on any substitution."""
    eps = [ep for ep in TARGET_EPS[target] if ep in kernels.EP_SHORT]
    # unset: the newest tables the target's providers have, never the installed ORT
    requested, fallback = kernels.chosen_release(ort_version, [kernels.EP_SHORT[ep] for ep in eps])
    versions, note = kernels.resolve([kernels.EP_SHORT[ep] for ep in eps], requested)  # one note per version
    tables = {ep: kernels.load(kernels.EP_SHORT[ep], versions[kernels.EP_SHORT[ep]]) for ep in eps}
    return tables, requested, [n for n in (fallback, note) if n]


class Simulator:
    """Nodes with the same signature (domain, op, opset, value types) get the same kernel, so each signature is
    looked up once; only nodes a rejects() rule or a GetCapability check may look at are decided one by one."""

    CAPABILITY_OPS = {"LSTM", "GRU", "RNN", "ConvTranspose", "Cast", "ArgMax", "ArgMin", "BatchNormalization",
                      *cpu_kernel_init.TREE_OPS}

    def __init__(self, index: GraphIndex, target: str, ort_version: str | None = None, rejects: Rejects | None = None,
                 reject_ops: set[str] | None = None, optimization: str = "all", tables: Tables | None = None,
                 resolved: model_load.Resolved | None = None):
        if optimization not in OPTIMIZATION_LEVELS:
            raise ValueError(f"optimization must be one of {', '.join(OPTIMIZATION_LEVELS)}, not {optimization!r}")
        self.index = index
        self.target = target
        self.resolved = resolved  # what ORT's Graph::Resolve says of the model, per release (model_load.refuses_model)
        self.optimization = optimization
        if tables is None:
            self.tables, self.version, self.notes = resolve_tables(target, ort_version)
        else:
            self.tables, self.version, self.notes = tables
        self.rejects: Rejects = rejects or (lambda node, target: None)  # (node, target) -> detail str if EP rejects node
        self._native_crashes: list[str] = []  # onnx's C++ crashed in the native worker (function expansion): said once
        # ops rejects() may refuse; None = any op (then nothing is shared between nodes)
        self.reject_ops = reject_ops if rejects is not None else set()
        # the ops decided one by one (_assign_fields), in one set: None = every op
        self._one_by_one = None if self.reject_ops is None else self.reject_ops | self.CAPABILITY_OPS
        # id(signature), with the ORT types of its untyped inputs where it has some -> (ep, status, reason, detail),
        # the placement of the function body ORT inlines, if any, and the code of the ORT types of its untyped
        # outputs (node_args.Produced; 0: it has none)
        self._by_signature: dict[Any, tuple[tuple[str | None, str, str | None, str], Placement | None, int]] = {}
        # function bodies ORT inlines: the placement of the body of the last node expanded, per node
        self._last_body: Placement | None = None
        self._fields: dict[tuple[str | None, str, str | None, str], tuple[str | None, str, str | None, str]] = {}
        self._body_of: dict[int, Placement] = {}
        self._ort_types: node_args.OrtTypes = {}  # node_args.ort_type_str's answers
        self._produced = node_args.Produced(len(index.nodes))  # the ORT types of keyed nodes' outputs
        self.opt: Optimized | None = None
        # the outputs of the Casts the Level-1 transformers removed: their readers read the Cast's input, of another
        # type where PreShapeNodeElimination removed it (its Shapes' kernels are looked up for that type)
        self._retyped: set[str] = set()

    def run(self) -> Placement:
        view = node_args.scoped_view(self.index)
        if view is not None:
            # bodies that reuse value names: placed on a view with those names made distinct, as ORT's
            # per-graph NodeArgs keep them, and handed back in the model's own nodes and names
            inner = Simulator(view.index, self.target, self.version, self.rejects, self.reject_ops, self.optimization,
                              (self.tables, self.version, self.notes), self.resolved)
            pl = view.restore(inner.run(), self.index)
            self.opt = inner.opt
            return pl
        pl = Placement(self.target, self.version, {ep: t.ort_version for ep, t in self.tables.items()}, self.notes,
                       optimization=self.optimization)
        preferred = TARGET_EPS[self.target][0]
        refused = model_load.refuses_model(self.index.source_model, self.version, self.index.memo,  # the file's model
                                           self.resolved)
        if refused:
            return self._refused(pl, *refused)
        # before the Level-1 transformers, at every level (InferenceSession::TransformGraph)
        unique_dq = ensure_unique_dq_for_node_unit.apply(self.index)
        if self.optimization != "disabled":
            cpu = self.tables.get(CPU)
            self.opt = optimize(self.index, self.optimization, self._cpu_kernel_for_folding if cpu is not None else None,
                                ort_version=self.version, unique_dq=unique_dq)
        removed = self.opt.removed if self.opt else {}
        self._retyped = {n.outputs[0] for n in (self.index.nodes[i] for i, r in removed.items() if r.reason == "cast")
                         if n.scope.type_of(n.outputs[0]).type_str != n.scope.type_of(n.inputs[0]).type_str}
        expanded_subgraphs: set[int] = set()
        local = self.index.is_local_function if self.index.functions else None  # asked per node only when there are some
        running = local_functions.running_roots(self.index) if local is not None else set()
        record = pl.recorder()  # record_as, bound once
        for node in self.index.nodes:
            if node.op_type == "Constant" and node.domain == "ai.onnx":
                continue  # ORT turns Constant nodes into initializers
            if local is not None and (local(node) or id(node.scope.root) not in running):
                continue  # ORT inlines model-local functions, their bodies placed instead; one nothing calls is dropped
            owner = node.scope.owner
            if owner is not None and owner.index in expanded_subgraphs:
                expanded_subgraphs.add(node.index)
                pl.record(node.index, NodePlacement(node, None, "expanded", "function",
                                                    f"inside {owner.op_type}, which ORT expands into its function body"))
                continue
            r = removed.get(node.index)
            if r is not None:
                record(node.index, node, (None, r.status, r.reason, r.detail))
                continue
            fields = self._assign_fields(node, preferred)
            if fields[1] == "expanded":
                expanded_subgraphs.add(node.index)
            record(node.index, node, fields)  # no NodePlacement made a node in a big model
        if preferred == CUDA:
            for scope in self.index.scopes:
                cpu_preferred.assign(scope, pl, self.opt, self.version)
        if self.opt is not None:
            line = self.opt.evaluations.summary("constant folding (onnxlint's model of ORT's)")
            if line:  # said once per model: a budget of work, not a defect of the model
                pl.notes = [*pl.notes, f"{line}; what they compute is taken as unknown"]
            self.opt.release()  # the optimizer model is not asked again: drop it now
        rewired = insert_cast_transformer.remove_duplicate_casts(pl, self.index, self.opt)  # every level
        self._inlined_bodies(pl)
        copies = self._dq_copies(pl, unique_dq, preferred)
        if self.opt is not None:
            _place_created(pl, self.opt, preferred)
        refusal = (self._levels_2_and_3(pl, preferred, copies) if self.optimization == "all"
                   else self._initializer_copy(pl, preferred, rewired))
        if refusal:
            return self._refused(Placement(pl.target, pl.ort_version, pl.table_versions, pl.notes, optimization=pl.optimization),
                                 *refusal)
        if len(self.tables) > 1:
            # one provider: every tensor stays where it is, no Memcpy
            memcpy.insert_boundaries(pl, self.index, self.opt, rewired, copies, self._mixed_bodies(pl))
        crashes = [*(self.opt.notes if self.opt is not None else ()), *self._native_crashes]
        if crashes:  # onnx's C++ crashed under the optimizer model or an expansion: said once each
            pl.notes = [*pl.notes, *(n for n in dict.fromkeys(crashes) if n not in pl.notes)]
        return pl

    def _refused(self, pl: Placement, reason: str, message: str) -> Placement:
        """pl (no node recorded yet) as ORT refusing the model: said once, on the first node; the others skipped."""
        pl.refused, pl.refused_reason = message, reason
        first = True
        for node in self.index.nodes:
            if node.op_type == "Constant" and node.domain == "ai.onnx":
                continue
            pl.record(node.index, NodePlacement(node, None, "refused" if first else "skipped", reason if first else None,
                                                message if first else ""))
            first = False
        return pl

    def _levels_2_and_3(self, pl: Placement, preferred: str, copies: dict[str, str]) -> tuple[str, str] | None:
        """The Level-2 and Level-3 transformers that change a placement (`all`, after partitioning); why ORT then
        refuses the session (a node a fusion put on CUDA has no CUDA kernel), if it does: (reason, message)."""
        gather_slice_fusion.apply(pl, self.index, self.opt)
        cuda = self.tables.get(CUDA)
        if preferred == CUDA and cuda is not None and releases.row(self.version).fusion_kernel_refusal:
            refused = gather_slice_fusion.no_kernel(pl, cuda)
            if refused:
                return "fusion-kernel", refused
        if preferred == CUDA and releases.row(self.version).dq_matmul_nbits_across_eps:
            dq_matmul_nbits_fusion.apply(pl, self.index, copies)
        if CPU in self.tables:
            nhwc_transformer.apply(pl, self.index, self.opt)
        return None

    def _initializer_copy(self, pl: Placement, preferred: str, rewired: dict[str, str]) -> tuple[str, str] | None:
        """ORT 1.23 refuses a CUDA session whose MemcpyTransformer copies an initializer it keeps in memory for the CUDA
        nodes (memcpy.duplicated_initializer): (reason, message), or None. At `all` the Level-2/3 fusions onnxlint
        does not model may change the initializer's readers: not claimed there."""
        if preferred != CUDA or CPU not in self.tables or not releases.row(self.version).initializer_copy_refusal:
            return None
        shared = memcpy.duplicated_initializer(pl, self.index, self.opt, rewired)
        if shared is None:
            return None
        value, host, device = shared
        where = "a CPU node" if pl.nodes.get(host.index).ep == CPU else "a host-memory input of a CUDA node"  # type: ignore[union-attr]
        return "initializer-copy", (
            f"ONNX Runtime {self.version} refuses this model on the CUDA EP: initializer '{value}' (over 127 bytes) is read"
            f" by {where} ('{host.name or host.op_type}', {host.op_type}) and by CUDA node '{device.name or device.op_type}'"
            f" ({device.op_type}); its MemcpyTransformer gives the CUDA nodes a copy that session creation refuses"
            " (SaveInitializedTensors: '!utils::HasExternalDataInMemory(tensor_proto) was false')")

    def _inlined_bodies(self, pl: Placement) -> None:
        """The nodes of the function bodies ORT inlines (Graph::InlineFunction, for a node no EP has a kernel for),
        where the body's own placement puts them (its GetCpuPreferredNodes: a GroupNormalization-21's Div and
        Concat of shape values on CPU)."""
        for index, sub in self._body_of.items():
            p = pl.nodes.get(index)
            if p is None or p.status != "expanded":
                continue
            node = p.node
            for bp in sub.nodes.values():
                if bp.ep is not None and bp.status not in GONE_STATUSES:
                    pl.created.append(CreatedNode(f"{node.name or node.op_type}_{bp.node.name or bp.node.op_type}", bp.node.op_type,
                                                  bp.node.domain, bp.ep, "InlineFunction", node,
                                                  f"a node of the function body ORT inlines for {node.op_type}"))
            pl.created.extend(CreatedNode(c.name, c.op_type, c.domain, c.ep, c.by, node, c.detail) for c in sub.created)

    def _mixed_bodies(self, pl: Placement) -> dict[int, memcpy.Body]:
        """The function bodies ORT inlines whose nodes run on both providers, by their node's index: where their
        edges cross (memcpy.mixed_body)."""
        bodies = {}
        for index, sub in self._body_of.items():
            p = pl.nodes.get(index)
            if p is not None and p.status == "expanded" and p.reason == "function-cpu":
                body = memcpy.mixed_body(p.node, sub)
                if body is not None:
                    bodies[index] = body
        return bodies

    def _dq_copies(self, pl: Placement, unique: ensure_unique_dq_for_node_unit.UniqueDQ, preferred: str) -> dict[str, str]:
        """EnsureUniqueDQForNodeUnit's copies that still have a reader, each where its DequantizeLinear runs (where
        it would run, when a Level-1 transformer removed the original), named as ORT names them (one `_token_`
        counter per graph for the node and value names it generates, a value first). Returns the DQ outputs read
        through copies and the provider the copies run on."""
        counters: dict[int, int] = {}
        taken: dict[int, set[str]] = {}
        eps: dict[str, str] = {}
        removed = self.opt.removed if self.opt is not None else {}
        for index, edges in unique.copies.items():
            dq = self.index.nodes[index]
            p = pl.nodes.get(index)
            if p is None or p.status == "expanded":
                continue
            if p.ep is None:  # the original went (folded with its QDQ node unit, a no-op DQ -> Q pair): not its copies
                p = self._assign_shared(dq, preferred)
                if p.ep is None:
                    continue
            scope = dq.scope
            names = taken.setdefault(id(scope), {n.name for n in scope.nodes} | set(scope.producer) | set(scope.inputs))
            alias = self.opt.alias if self.opt is not None else {}
            for reader, slot in edges:
                gone = removed.get(reader.index)
                if gone is not None and (gone.status == "folded" or not any(o in alias for o in reader.outputs if o)):
                    continue  # its reader went for good (folded, dropped): the copy went with it; a reader
                    # bypassed (an Identity) or fused leaves the copy to what reads its output now
                for base in (f"{dq.outputs[0]}/duplicated", f"{dq.name}/duplicated"):  # its output, then the node
                    name = base
                    while name in names:
                        name = f"{base}_token_{counters.get(id(scope), 0)}"
                        counters[id(scope)] = counters.get(id(scope), 0) + 1
                    names.add(name)
                eps[dq.outputs[0]] = p.ep
                pl.created.append(CreatedNode(name, dq.op_type, dq.domain, p.ep, ensure_unique_dq_for_node_unit.NAME, dq,
                                              f"a copy of {dq.name or dq.op_type} for input {slot} of {reader.name or reader.op_type}:"
                                              " each QDQ node unit gets its own DequantizeLinear"))
        return eps

    # -------------------------------------------------------------- kernel assignment
    def _bind(self, node: NodeRef, table: kernels.KernelTable,
              fp16_as_float: bool = False) -> Callable[[Iterable[str]], dict[str, str]]:
        opt = self.opt
        reads = (lambda v: opt.resolve(v) if self._retyped_input(v) else v) if self._retyped and opt is not None else None
        return bind_types(node, table, fp16_as_float, self._ort_types, self._produced, reads)

    def _retyped_input(self, value: str) -> bool:
        """Whether an input reading value now reads, along the values removed nodes rewired, past a removed Cast."""
        alias = self.opt.alias if self.opt is not None else {}
        for _ in range(100):  # Optimized.resolve's bound
            if value in self._retyped:
                return True
            if value not in alias:
                return False
            value = alias[value]
        return False

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
            # a domain that is not UTF-8 is the bytes protobuf hands over: its text, the bad bytes as `\xNN`
            return kernels.KernelMatch(False, "custom-domain",
                                       f"no provider registers domain '{field_text(node.domain)}' (needs a custom-op library)")
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
        return NodePlacement(node, *self._assign_fields(node, preferred))

    def _assign_fields(self, node: NodeRef, preferred: str) -> tuple[str | None, str, str | None, str]:
        """The node's placement as its fields but the node (ep, status, reason, detail)."""
        one_by_one = self._one_by_one
        if one_by_one is None or node.op_type in one_by_one or (self._retyped and any(map(self._retyped_input, node.inputs))):
            self._last_body = None
            p = self._assign(node, preferred)
            if p.status == "expanded" and self._last_body is not None:
                self._body_of[node.index] = self._last_body
            return p.ep, p.status, p.reason, p.detail
        sig = self.index.signature(node)
        # the index's signatures are one object each (GraphIndex.signature): its id stands for it, and an int
        # hashes at once where the signature's nested tuples are hashed again at each lookup
        key: Any = id(sig)
        types = sig[3]
        if None in types:  # an untyped input may have the type ORT's own schema gives a contrib op's output
            types = node_args.ort_input_types(self.index, node, types, self._ort_types, self._produced)
            key = (key, types)
        got = self._by_signature.get(key)
        if got is None:
            self._last_body = None
            p = self._assign(node, preferred)
            outputs = self._produced.code(node_args.output_types(sig, types)) if None in sig[4] else 0
            fields = (p.ep, p.status, p.reason, p.detail)
            # equal fields one object (most signatures are ('CUDAExecutionProvider', 'device', None, '')): recorded
            # one after another, NodeVerdicts.set_fields finds their code without hashing them
            fields = self._fields.setdefault(fields, fields)
            got = self._by_signature[key] = (fields, self._last_body, outputs)
        hit, body, outputs = got
        if outputs:  # what the readers of its untyped outputs ask (node_args.ort_input_types)
            self._produced.codes[node.index] = outputs
        if hit[1] == "expanded" and body is not None:
            self._body_of[node.index] = body
        return hit

    def _assign(self, node: NodeRef, preferred: str) -> NodePlacement:
        first: kernels.KernelMatch | None = None
        for ep in self.tables:
            m = self._lookup(node, ep)
            if first is None:
                first = m
            if m.ok:
                # the kernel's constructor throws (CUDA: BatchNormalization training_mode; CPU: a TreeEnsemble whose
                # node ids repeat or point to themselves): the session fails, whichever provider took the node
                failure = (cuda_capability.cuda_kernel_init_failure(node) if ep == CUDA and ep == preferred else
                           cpu_kernel_init.cpu_kernel_init_failure(node) if ep == CPU else None)
                if failure:
                    return NodePlacement(node, None, "unsupported", "kernel-init", failure)
                if ep == preferred:
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
        body = expand_function(node, self._native_crashes)
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
        self._last_body = sub
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


def _place_created(pl: Placement, opt: Optimized, preferred: str) -> None:
    """The nodes the Level-1 transformers added, where they run: a node reading only host-side shape values
    (the Gather after a Shape) on CPU where GetCpuPreferredNodes runs (CUDA preferred) or its source runs on CPU,
    else where its source runs. A node whose source was folded afterwards went with it (its inputs constant).
    A Shape that falls back to CPU for want of a CUDA kernel (Shape-21 before 1.24) is no CUDA node whose output
    lives on the host, so GetCpuPreferredNodes starts nothing from it: its Gather stays on CUDA, as the model's own
    Gathers of it do (measured on 1.23.2: the int4 QDQ BERT's two TransposeOptimizer Gathers)."""
    taken: set[str] = set()
    for c in opt.created:
        p = pl.nodes.get(c.source.index)
        if p is None or p.status in GONE_STATUSES or p.ep is None:
            continue
        ep = p.ep
        if c.runs_with == "shape-consumer" and (p.ep == CPU or (p.ep == CUDA and preferred == CUDA)):
            ep = preferred if p.status == "fallback" and preferred == CUDA else CPU
        name, k = c.name, 0
        while name in taken:
            k += 1
            name = f"{c.name}_token_{k}"
        taken.add(name)
        pl.created.append(CreatedNode(name, c.op_type, c.domain, ep, c.by, c.source, c.detail))


def simulate(index: GraphIndex, target: str, ort_version: str | None = None, rejects: Rejects | None = None,
             reject_ops: set[str] | None = None, optimization: str = "all",
             resolved: model_load.Resolved | None = None) -> Placement:
    """Placement of every node by ORT `ort_version` for `target`, after ORT's Level-1 graph optimizations at
    `optimization` (disabled | basic | all; ORT's default session options are all); resolved: what ORT's
    Graph::Resolve says of the model (model_load.resolved_for), asked where a refusal comes after it."""
    return Simulator(index, target, ort_version, rejects, reject_ops, optimization, resolved=resolved).run()


def bind_types(node: NodeRef, table: kernels.KernelTable, fp16_as_float: bool = False,
               ort_types: node_args.OrtTypes | None = None,
               produced: node_args.Produced | None = None,
               reads: Callable[[str], str] | None = None) -> Callable[[Iterable[str]], dict[str, str]]:
    """The binder a kernel lookup asks: type parameter names -> the node's dtype strings, through the op schema's
    formal parameters (else the table's own for an op onnx has no schema of); a value onnx's inference left untyped
    has the type ORT's gives it (node_args.ort_type_str; ort_types: its answers so far, produced: the partitioner's
    for its keyed nodes' outputs). fp16_as_float: float16 seen as float (the Casts InsertCastTransformer adds
    around a CPU node). reads: the value an input reads now, where a removed node rewired it to another type."""
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
                    if reads is not None and kind == "in":
                        value = reads(value)
                    got = node.scope.type_of(value).type_str or node_args.ort_type_str(node.scope, value, cache=ort_types,
                                                                                       produced=produced)
                    if got:
                        out[type_str] = "tensor(float)" if fp16_as_float and got == "tensor(float16)" else got
        return out

    return bind
