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
