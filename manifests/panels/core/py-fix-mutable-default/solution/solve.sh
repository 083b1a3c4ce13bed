#!/usr/bin/env bash
# Reference solution: None defaults, and copy the caller's items.
set -euo pipefail
cat > cart.py <<'EOF'
"""A shopping cart and a small tag helper."""


class Cart:
    """Items are (name, quantity) pairs."""

    def __init__(self, items=None):
        self.items = list(items) if items is not None else []

    def add(self, name, qty=1):
        self.items.append((name, qty))
        return self

    def total_quantity(self):
        return sum(qty for _, qty in self.items)


def add_tag(tag, tags=None):
    """Append `tag` to `tags` (a new list when none is given) and return the list."""
    if tags is None:
        tags = []
    tags.append(tag)
    return tags
EOF
