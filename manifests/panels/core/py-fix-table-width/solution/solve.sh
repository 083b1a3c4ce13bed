#!/usr/bin/env bash
# Reference solution: measure cells in terminal columns (wide = 2, combining/zero-width = 0).
set -euo pipefail
cat > table.py <<'EOF'
"""Plain-text tables for terminal output."""

import unicodedata

_ZERO_WIDTH = {"\u200b", "\u200d"}


def display_width(text):
    """Terminal columns `text` occupies: wide/fullwidth 2, combining and zero-width 0, others 1."""
    width = 0
    for ch in text:
        if ch in _ZERO_WIDTH or unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def render(rows):
    """Render rows (lists of cells) as an aligned table; the first row is the header."""
    if not rows:
        return ""
    texts = [[str(cell) for cell in row] for row in rows]
    widths = [max(display_width(row[i]) for row in texts) for i in range(len(texts[0]))]
    lines = []
    for n, row in enumerate(texts):
        cells = [cell + " " * (width - display_width(cell)) for cell, width in zip(row, widths)]
        lines.append(" | ".join(cells).rstrip())
        if n == 0:
            lines.append("-+-".join("-" * width for width in widths))
    return "\n".join(lines)
EOF
