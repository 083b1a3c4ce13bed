#!/usr/bin/env bash
# Reference solution: count the joining space only when the line is not empty; cut long words.
set -euo pipefail
cat > textwrap_lite.py <<'EOF'
"""Greedy word wrapping."""


def wrap(text, width):
    """Split `text` into lines of at most `width` characters."""
    if width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    lines = []
    line = ""
    for word in text.split():
        pieces = [word[i : i + width] for i in range(0, len(word), width)]
        for piece in pieces:
            if not line:
                line = piece
            elif len(line) + 1 + len(piece) <= width:
                line = f"{line} {piece}"
            else:
                lines.append(line)
                line = piece
    if line:
        lines.append(line)
    return lines
EOF
