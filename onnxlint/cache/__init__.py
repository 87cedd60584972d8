"""A result cache like ruff's: an unchanged model linted with unchanged settings is not linted again.

Key (blake2b, hex): the model file's bytes, its path (findings and per-file-ignores name it), the settings (every
field of `Settings` and its `Config`, and the config file's bytes), the bytes of every rule file in force
(built-in and extra, hashed as bytes: never parsed), the installed package (`__version__`, and the size and
mtime of every file of the onnxlint package, data tables included, so an editable checkout invalidates on edit)
and the onnx/onnxruntime distributions installed (their dist-info names carry the versions).

External data is never read: the entry records the size and mtime (ns) of each external-data file the model
names, and a lookup whose stat() of them differs is a miss.

Value: the `FileReport` as JSON (findings, notes, placement lines). Reports with an error are not stored (an
unreadable or half-written file must be looked at again). A run over several models also stores their reports
together, as one run entry keyed by all their keys in order (`runs/`): a repeat over an unchanged folder opens
one file, not one per model, and still hashes every model, so nothing but the bytes decides a hit. A report
is stored only under the key of the bytes the linter parsed (FileReport.digest). An entry is data: a stored
report is checked (report_json) and rendered like a fresh one; what a run printed is never kept.

Folder: `.onnxlint_cache/` in the current directory, like ruff's `.ruff_cache/`: per project, visible, easy to
delete (`onnxlint clean`) and to keep between CI runs (cache the folder by path), and the per-file-ignores and
relative paths in findings are project-relative anyway; outside a git work tree, a folder for the current one in
the user's cache home (a shipped `.onnxlint_cache/` cannot be told from one's own without git: folder.default_dir).
`$ONNXLINT_CACHE_DIR` or `--cache-dir` moves it. The
folder is made by onnxlint with a `.gitignore` (`*`) and a `CACHEDIR.TAG` so version control and backup tools
skip it; an existing folder without onnxlint's tag is never used, marked or cleaned (folder.py). An
unwritable or foreign folder disables the cache silently.

Entries are written to a temporary file in the same folder and renamed over the entry (atomic on POSIX and
Windows), so concurrent runs never see half an entry; two writers of one key write the same bytes. A corrupt,
truncated, forged or foreign entry is ignored (a miss) and rewritten.

The hit path imports neither onnx nor yaml (nor numpy): computing the key needs only os, json and hashing.

One module per job: keys (what a key hashes), folder (where entries live, atomic writes, clean), entries (a
model's entry), report_json (the report's JSON form), rulesets (the parsed rules), runs (a run's entries).
"""

from onnxlint.cache.entries import external_files, lookup, store
from onnxlint.cache.folder import DEFAULT_DIR, ENV_DIR, FORMAT, clean, default_dir, is_cache
from onnxlint.cache.keys import key, settings_fingerprint
from onnxlint.cache.report_json import report_from_json, report_to_json
from onnxlint.cache.rulesets import RuleIndex, RuleInfo, cached_ruleset, rule_index
from onnxlint.cache.runs import CachedRun, lint_with_cache

__all__ = ["DEFAULT_DIR", "ENV_DIR", "FORMAT", "CachedRun", "RuleIndex", "RuleInfo", "cached_ruleset", "clean",
           "default_dir", "external_files", "is_cache", "key", "lint_with_cache", "lookup", "report_from_json", "report_to_json",
           "rule_index", "settings_fingerprint", "store"]
