"""How a finding names its node: the GraphIndex location (`graph/<name>`, `graph/<op>#<position>` unnamed, a
body's node under its owner, a local function's `function:<domain>.<name>/...`) and the readable path shown for
it. A module of its own, without the index, so the report and the cache's hit path can name nodes without
importing the graph walk."""

from __future__ import annotations

MAIN_GRAPH = "graph/"  # how a GraphIndex location of the main graph begins


def node_path(location: str | None) -> str | None:
    """What a finding calls its node: the GraphIndex location without the main graph's `graph/`, so a node reads
    as the model names it: `/encoder/Reshape_9` (a torch name), `Relu#3` (unnamed: op and position), a body's
    node under its owner `If_3:then_branch/Resize_7`, a local function's `function:dom.f/Mul`, a graph input
    `input:x`."""
    return location[len(MAIN_GRAPH):] if location and location.startswith(MAIN_GRAPH) else location


def node_location(path: str | None) -> str | None:
    """The GraphIndex location of a finding's node path (node_path's inverse): what locates the node in the model
    and what fingerprints hash (baselines and SARIF fingerprints made before paths were readable still match)."""
    if not path or path.startswith("function:"):
        return path
    return MAIN_GRAPH + path


NAME_LIMIT = 256  # characters of a model's name that a scope's path repeats for each node under it


def capped(name: str) -> str:
    """A name from the model as part of a scope's path: at most NAME_LIMIT characters, a longer one its first 200
    and a hash of the whole (distinct names stay distinct). Each node of a body repeats its owner's location: an
    If named with 400,000 characters over 3,200 body nodes made 1.3 GB of placement and 3.8 GB of memory."""
    if len(name) <= NAME_LIMIT:
        return name
    import hashlib

    digest = hashlib.blake2b(name.encode("utf-8", "surrogateescape"), digest_size=6).hexdigest()
    return f"{name[:200]}...{digest}"


def body_path(scope_path: str, owner: str, attribute: str) -> str:
    """The path of a control-flow body: its owner's location (`scope_path/owner`, owner its name or `op#i`) and
    the attribute holding it, each name capped."""
    return f"{scope_path}/{capped(owner)}:{capped(attribute)}"


def function_path(domain: str, name: str) -> str:
    """The path of a local function's body: `function:<domain>.<name>`, capped."""
    return "function:" + capped(f"{domain + '.' if domain else ''}{name}")
