#!/usr/bin/env bash
# Reference solution: one summarize() and a loop over the three groups.
set -euo pipefail
cat > report.py <<'EOF'
"""Plain-text sales report."""


def summarize(values):
    """Count, total, mean (float) and max of a list of numbers; max is None for an empty list."""
    count = len(values)
    total = sum(values)
    return {
        "count": count,
        "total": total,
        "mean": total / count if count else 0.0,
        "max": max(values) if values else None,
    }


def build_report(orders):
    """Report of order amounts for the north and south regions and overall.

    `orders` is a list of dicts with "region" and "amount" keys.
    """
    groups = [
        ("north", [o["amount"] for o in orders if o["region"] == "north"]),
        ("south", [o["amount"] for o in orders if o["region"] == "south"]),
        ("all", [o["amount"] for o in orders]),
    ]
    lines = []
    for label, values in groups:
        s = summarize(values)
        lines.append(f"{label}: {s['count']} orders, total {s['total']:.2f}, mean {s['mean']:.2f}, max {s['max']}")
    return "\n".join(lines)
EOF
