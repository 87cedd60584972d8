"""The severities a rule and a finding have, least first: what --fail-on, --show-info and the exit code compare.
A module of its own: the config and a cached run's report read them without importing the rule types."""

from __future__ import annotations

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
SEVERITIES = tuple(SEVERITY_RANK)
