"""YAML loading for user-supplied files (config, rule files) with a bounded cost.

PyYAML composes an alias as a reference to its anchor's node, so a 700-byte file of nested aliases
("billion laughs") composes quickly, but anything that walks the result as a tree (merge keys, validation,
repr in an error message) pays for every expansion: 2**30 nodes. Here the node graph is measured before
anything is constructed: its size with every alias expanded must stay within the nodes actually written plus
ALIAS_BUDGET, and recursive aliases are refused. The measure is linear in the node graph.

Every failure is a RuleError naming the file (and line when known): unreadable, not UTF-8, a syntax error,
the alias budget, nesting too deep, more than one document.
"""

from __future__ import annotations

import os
from typing import Any

import yaml

from onnxlint.support.errors import RuleError, first_line
from onnxlint.support.reading import TEXT_LIMIT
from onnxlint.support.textfile import (
    read_text,  # noqa: F401 - re-exported: callers read rule files through here
    require_short_numbers,
)

ALIAS_BUDGET = 100_000  # nodes that aliases may add to a document once expanded
MAX_DEPTH = 200  # nested collections; PyYAML composes and constructs recursively

SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml parses when present


def load(text: str, name: str, loader_cls: type = SafeLoader, alias_budget: int = ALIAS_BUDGET) -> Any:
    """One YAML document from text, constructed with loader_cls (a SafeLoader subclass, e.g. one that
    records line numbers per mapping key; it sees `loader.name == name`). None for an empty document.

    RuleError (with `name:line:`) for a syntax error, aliases past alias_budget, recursive aliases, nesting
    deeper than MAX_DEPTH or a second document. A RuleError raised by loader_cls's constructors passes
    through unchanged."""
    loader = loader_cls(text)
    loader.name = name
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_expansion(node, name, alias_budget)
        data = loader.construct_document(node)
        require_short_numbers(data, name)
        return data
    except RuleError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        raise RuleError(f"{name}:{line}: YAML syntax error: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise RuleError(f"{name}: YAML error: {first_line(exc)}") from None
    except RecursionError:
        raise RuleError(f"{name}: YAML nesting too deep") from None
    except (ValueError, OverflowError) as exc:  # an integer past Python's 4,300 digits for a conversion
        raise RuleError(f"{name}: a value that cannot be read: {first_line(exc)}") from None
    finally:
        loader.dispose()


def load_path(path: str | os.PathLike, loader_cls: type = SafeLoader, what: str = "file",
              alias_budget: int = ALIAS_BUDGET, limit: int = TEXT_LIMIT) -> Any:
    """read_text() (within limit bytes) then load(), the file's path as the name in every message."""
    return load(read_text(path, what, limit), str(path), loader_cls, alias_budget)


def check_expansion(root: yaml.Node, name: str, alias_budget: int = ALIAS_BUDGET) -> int:
    """The document's size in nodes with every alias expanded; RuleError when that exceeds the distinct
    nodes written plus alias_budget, when an alias refers to a node that contains it, or when collections
    nest deeper than MAX_DEPTH. Iterative, each distinct node visited once."""
    expanded: dict[int, int] = {}  # id(node) -> expanded size
    on_path: set[int] = set()
    distinct = 0
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            if isinstance(node, yaml.MappingNode):
                size = 1 + sum(expanded[id(k)] + expanded[id(v)] for k, v in node.value)
            else:
                size = 1 + sum(expanded[id(v)] for v in node.value)
            expanded[key] = size
            continue
        if key in expanded:
            continue
        if key in on_path:
            raise RuleError(f"{name}:{node.start_mark.line + 1}: YAML alias refers to a node that contains it")
        distinct += 1
        if isinstance(node, yaml.ScalarNode):
            expanded[key] = 1
            continue
        if len(on_path) >= MAX_DEPTH:
            raise RuleError(f"{name}:{node.start_mark.line + 1}: YAML nesting deeper than {MAX_DEPTH} levels")
        on_path.add(key)
        stack.append((node, True))
        children = [c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) else node.value
        for child in children:
            if id(child) in on_path:
                raise RuleError(f"{name}:{child.start_mark.line + 1}: YAML alias refers to a node that contains it")
            if id(child) not in expanded:
                stack.append((child, False))
    total = expanded[id(root)]
    if total > distinct + alias_budget:
        _too_big(root, name, alias_budget)
    return total


def _too_big(node: yaml.Node, name: str, alias_budget: int) -> None:
    raise RuleError(f"{name}:{node.start_mark.line + 1}: YAML aliases expand past {alias_budget:,} extra nodes "
                    f"(an alias bomb?); write the values out or use fewer aliases")
