#!/usr/bin/env bash
set -eu
cat > mathx/stats.py <<'PY'
def mean(values):
    values = list(values)
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / len(values)


def median(values):
    values = sorted(values)
    if not values:
        raise ValueError("median of an empty list")
    mid = len(values) // 2
    if len(values) % 2:
        return values[mid]
    return (values[mid - 1] + values[mid]) / 2
PY
