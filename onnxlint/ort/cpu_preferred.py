"""GetCpuPreferredNodes (fallback_cpu_capability.cc): after the CUDA EP claimed its nodes, small shape
computations that only read CPU tensors go back to CPU on purpose, saving the copies."""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import attrgetter

import numpy as np
import onnx

from onnxlint.model.graph import GraphScope, NodeRef
from onnxlint.ort import releases, schema_registry
from onnxlint.ort.graph_viewer import ort_topological_order
from onnxlint.ort.kernel_registry import cpu_inputs, cpu_outputs
from onnxlint.ort.memcpy import output_on_host
from onnxlint.ort.optimizer.initializers import constant_tensor
from onnxlint.ort.optimizer.optimized import Optimized
from onnxlint.ort.verdicts import CPU, CUDA, GONE_STATUSES, Placement

HALF_TYPES = {"float16", "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"}
SMALL_INITIALIZER = 100  # kSmallInitializerThreshold in fallback_cpu_capability.cc


def assign(scope: GraphScope, pl: Placement, opt: Optimized | None, version: str) -> None:
    """Mark the nodes of scope GetCpuPreferredNodes puts on CPU (status deliberate). opt: what the Level-1
    transformers did; version: the ORT release modelled."""
    verdict = pl.nodes.fields_getter(("ep", "status"))  # no NodePlacement made a node (a million at 1M nodes)
    seeds = _seeds(scope, verdict)
    if not seeds:
        return  # nothing can be CPU-preferred without a CPU tensor to start from
    queue = _Candidates(scope, opt, verdict)
    for value in seeds:
        queue.on_cpu(value)
    # GetCpuPreferredNodes treats a node no EP has a kernel for as a CPU node (its outputs are CPU tensors) when
    # the partitioner sees it before inlining its function body: measured so on 1.24.4 in main graphs (not in
    # control-flow bodies), not on 1.31.1
    unexpanded_on_cpu = scope.parent is None and releases.row(version).function_node_cpu_in_first_pass
    for node in queue:
        p = verdict(node.index)
        if p is None:
            continue
        ep, status = p
        if status == "expanded" and unexpanded_on_cpu:
            queue.outputs_on_cpu(node)
            continue
        if status in GONE_STATUSES:
            continue
        if ep != CUDA:
            if ep in (CPU, None):
                queue.outputs_on_cpu(node)
            continue
        if status == "device" and _inputs_on_cpu(node, scope, opt, queue):
            pl.record_as(node.index, node, _DELIBERATE)  # no NodePlacement made a node in a big model
            queue.outputs_on_cpu(node)


RESOLVE_STEPS = 100  # how many rewirings Optimized.resolve follows: a name further back reads another name
_ON_CUDA = (CUDA, "device")  # (ep, status) of a node the CUDA EP claimed
# leave out of the queue a reader that reads a new CPU tensor at an input its CUDA kernel takes in host memory:
# judged, it stays on CUDA (_inputs_on_cpu), so visiting it changes nothing (off: every reader queued; a test
# compares both ways)
SKIP_HOST_INPUT_READERS = True
# the fields but the node of the NodePlacement of a node GetCpuPreferredNodes puts on CPU
_DELIBERATE = (CPU, "deliberate", "cpu-preferred", "ORT runs this small shape computation on CPU on purpose (inputs are CPU tensors)")


def _seeds(scope: GraphScope, verdict: Callable[[int], tuple[object, ...] | None]) -> list[str]:
    """CPU-resident outputs of CUDA nodes (Shape, Size, ...): where shape subgraphs start."""
    seeds = []
    for n in scope.nodes:
        outs = cpu_outputs(n.op_type)
        if not outs:
            continue  # the op's placement not read: most ops have no CPU output
        if verdict(n.index) != _ON_CUDA:
            continue
        for i in outs:
            if i < len(n.outputs) and n.outputs[i]:
                seeds.append(n.outputs[i])
    return seeds


class _Candidates:
    """GetCpuPreferredNodes' candidate queue: the consumers of CPU tensors, popped in GraphViewer's order of the
    graph ORT partitions (after the Level-1 transformers), each judged once, so a producer moved by CSE must
    come first.

    Read from the index's own tables (a scope's nodes are numbered consecutively from scope.first_index; its
    consumers), plus the readers of the names the transformers rewired: no per-node dict of its own (at 1M nodes
    the positions, nodes and consumers copied into dicts were the lint's peak, +180 MB)."""

    def __init__(self, scope: GraphScope, opt: Optimized | None,
                 verdict: Callable[[int], tuple[object, ...] | None] | None = None) -> None:
        order = opt.orders.get(id(scope)) if opt is not None else None
        if order is None:
            order = ort_topological_order(scope, opt)
        self.nodes, self.base = scope.nodes, scope.first_index
        self.pos = _positions(order, self.base, len(self.nodes))
        self.cpu_args: set[str] = set()
        self.constants = opt.constants if opt is not None else set()
        self.host_inputs: dict[tuple[str, int | None, str], frozenset[int]] = {}  # op -> cpu_inputs, asked once an op
        self._counts: dict[str, bool] = {}  # counts_as_cpu's answers
        self.heap: list[tuple[int, int]] = []
        self.visited: set[int] = set()
        self.alias, self.resolve = (opt.alias if opt is not None else {}), _resolver(opt)
        self.readers = scope.consumers
        self.scope, self.opt, self.verdict = scope, opt, verdict
        # a name rewired to another (alias, the whole model's): its readers read what it resolves to. Where the
        # scope reads fewer names than the model aliases (a body), its aliased names' readers by what they
        # resolve to (rewired); else the names each name is rewired to directly (rewired_from): the names that
        # resolve to a CPU tensor are looked up when it becomes one (a few), not every aliased name's readers and
        # resolution (a million-node model aliases 133k names)
        self.rewired: dict[str, list[NodeRef]] = {}
        self.rewired_from: dict[str, list[str]] | None = None
        alias, readers = self.alias, self.readers
        if len(alias) < len(readers):
            self.rewired_from = {}
            for name, target in alias.items():
                self.rewired_from.setdefault(target, []).append(name)
        else:
            for name in readers:
                if name in alias:
                    self.rewired.setdefault(self.resolve(name), []).extend(readers[name])

    def on_cpu(self, value: str) -> None:
        """A value is a CPU tensor: its consumers become candidates."""
        self.cpu_args.add(value)
        base, pos = self.base, self.pos
        if value in self.alias:
            return  # read as what it resolves to: no reader reads it, nothing resolves to it
        kept: bool | None = None  # whether value, read at a host-memory input, is no reason to refuse (asked once)
        skip = SKIP_HOST_INPUT_READERS and self.verdict is not None
        for readers in (self.readers.get(value, ()), *self._rewired_readers(value)):
            for c in readers:
                at = pos[c.index - base]
                if at < 0:
                    continue
                if skip and self._host_reader(c, value):
                    if kept is None:
                        kept = self.counts_as_cpu(value)
                    if not kept:
                        continue  # _inputs_on_cpu refuses it at that input, whenever it is judged
                heapq.heappush(self.heap, (at, c.index))

    def counts_as_cpu(self, value: str) -> bool:
        """Whether value counts as a CPU tensor whatever produces it: a small initializer, a graph input, an outer
        value. Asked once a value: a transformer's blocks read the same few initializers (the 1M model's 133k
        Gathers and Concats each read one of two)."""
        got = self._counts.get(value)
        if got is None:
            scope = self.scope
            got = self._counts[value] = bool(_small_initializer(scope, value, self.opt) or scope.is_graph_input(value)
                                             or _outer(scope, value))
        return got

    def host_inputs_of(self, node: NodeRef) -> frozenset[int]:
        """The inputs the node's CUDA kernel takes in host memory (cpu_inputs, asked once an op)."""
        op = (node.op_type, node.opset, node.domain)
        got = self.host_inputs.get(op)
        if got is None:
            got = self.host_inputs[op] = cpu_inputs(node.op_type, schema_registry.since_version(*op))
        return got

    def _host_reader(self, node: NodeRef, value: str) -> bool:
        """Whether node is a CUDA node the EP claimed that reads value (as resolved) at an input its kernel takes
        in host memory."""
        host = self.host_inputs_of(node)
        if not host or self.verdict is None or self.verdict(node.index) != _ON_CUDA:
            return False
        inputs = node.inputs
        for i in host:
            name = inputs[i] if i < len(inputs) else ""
            if name and (name == value or (name in self.alias and self.resolve(name) == value)):
                return True
        return False

    def _rewired_readers(self, value: str) -> list[Sequence[NodeRef]]:
        """The readers of the names that resolve to value (not itself aliased)."""
        back = self.rewired_from
        if back is None:
            rewired = self.rewired.get(value)
            return [rewired] if rewired else []
        out: list[Sequence[NodeRef]] = []
        names = back.get(value)
        steps = 0
        # each name rewired to value, then each rewired to one of those, ..., as far as Optimized.resolve goes
        while names and steps < RESOLVE_STEPS:
            steps += 1
            more: list[str] = []
            for name in names:
                got = self.readers.get(name)
                if got:
                    out.append(got)
                more.extend(back.get(name, ()))
            names = more
        return out

    def outputs_on_cpu(self, node: NodeRef) -> None:
        for out in node.outputs:
            self.on_cpu(out)

    def __iter__(self) -> Iterator[NodeRef]:
        while self.heap:
            _, idx = heapq.heappop(self.heap)
            if idx in self.visited:
                continue
            self.visited.add(idx)
            yield self.nodes[idx - self.base]


def _positions(order: Iterable[NodeRef], base: int, size: int) -> array[int]:
    """node index - base -> the node's position in order; -1: not in it. Set by numpy: a million positions."""
    at = np.fromiter(map(attrgetter("index"), order), dtype=np.int64)
    pos = np.full(size, -1, dtype=np.int64)
    pos[at - base] = np.arange(len(at), dtype=np.int64)
    out = array("q")
    out.frombytes(pos.tobytes())
    return out


def _inputs_on_cpu(node: NodeRef, scope: GraphScope, opt: Optimized | None, queue: _Candidates) -> bool:
    """Whether a CUDA node reads only CPU tensors (small initializers, graph inputs and outer values count as
    such), no half type, and none at an input its CUDA kernel wants in host memory anyway."""
    on_cpu = queue.host_inputs_of(node)
    cpu_args, constants = queue.cpu_args, queue.constants
    for i, value in enumerate(node.inputs):
        if value and scope.type_of(value).dtype in HALF_TYPES:  # a main graph's dict read at once (type_of)
            return False
        if value in queue.alias:
            value = queue.resolve(value)
        if value and value in cpu_args and i not in on_cpu and value not in constants:
            continue  # a CPU tensor where the kernel takes one: what the checks below conclude, without them
            # (a folded value is left to them: _small_initializer may ask the optimizer's sizer of it)
        if value and queue.counts_as_cpu(value):
            continue
        if not value or value not in queue.cpu_args:
            return False
        if i in on_cpu:
            return False
    return True


def _outer(scope: GraphScope, value: str) -> bool:
    """A value of an enclosing graph (an implicit input of a control-flow body)."""
    if scope.parent is None or value in scope.producer or value in scope.initializers or value in scope.constants:
        return False
    return value not in scope.inputs


def _small_initializer(scope: GraphScope, value: str, opt: Optimized | None) -> bool:
    if opt is not None and value in opt.constants:
        vt = scope.type_of(value)
        n = vt.numel()
        if n is None and opt is not None:
            shp = opt.shapes.get(value)
            if (shp is None or not all(isinstance(d, int) for d in shp)) and opt.sizer is not None:
                shp = opt.sizer(scope, value)  # learnt again after folding, as ORT does
            if shp is not None and all(isinstance(d, int) for d in shp):
                n = 1
                for d in shp:
                    n *= d
        return n is not None and n <= SMALL_INITIALIZER
    t = constant_tensor(scope, value)
    if t is None:
        return False
    n = 1
    for d in t.dims:
        n *= d
    return n <= SMALL_INITIALIZER



def _resolver(opt: Optimized | None) -> Callable[[str], str]:
    def resolve(value: str) -> str:
        return opt.resolve(value) if opt is not None and value else value

    return resolve


def reads_only_cpu_tensors(pl: Placement, node: NodeRef,
                           constant: Callable[[str], onnx.TensorProto | None]) -> bool:
    """Whether every input of the node is already a CPU tensor under the CUDA EP's placement pl (a Shape/Size
    output, an output of a node placed on CPU, a small constant; constant(value) finds the constant behind a
    value) and at least one comes from such a node: the small shape computations GetCpuPreferredNodes puts on
    CPU on purpose."""
    from_cpu_node = False
    for i, value in enumerate(node.inputs):
        if not value:
            continue
        vt = node.input_type(i)
        if vt.dtype in HALF_TYPES or vt.dtype in ("float", "double"):
            return False  # shape computations are integer (GetCpuPreferredNodes also skips half types)
        t = constant(value)
        if t is not None:
            n = 1
            for d in t.dims:
                n *= d
            if n > SMALL_INITIALIZER:
                return False
            continue
        prod = node.scope.producer_of(value)
        if prod is None:
            return False  # a graph input: copied to the device for a CUDA node, so not a CPU tensor here
        pp = pl.get(prod)
        if pp is None or pp.status in GONE_STATUSES:
            return False
        if output_on_host(pp.ep, prod, value):
            from_cpu_node = True
            continue
        return False
    return from_cpu_node
