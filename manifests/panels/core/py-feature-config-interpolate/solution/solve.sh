#!/usr/bin/env bash
# Reference solution: one regex pass per value over ${name} and $$, against the keys seen so far.
set -euo pipefail
cat > kvconfig.py <<'EOF'
"""A tiny `key = value` configuration format."""

import re

_REF = re.compile(r"\$\$|\$\{([^}]*)\}")


def parse(text, *, interpolate=False):
    """Parse `key = value` lines into a dict; blank lines and `#` comments are skipped.

    With interpolate=True, `${name}` is replaced by the value of an earlier key and `$$` by `$`.
    """
    result = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise ValueError(f"line {number}: expected 'key = value'")
        key, value = line.split("=", 1)
        value = value.strip()
        if interpolate:
            value = _expand(value, result, number)
        result[key.strip()] = value
    return result


def _expand(value, known, number):
    def replace(match):
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        if name not in known:
            raise KeyError(f"undefined key {name!r} on line {number}")
        return known[name]

    return _REF.sub(replace, value)
EOF
