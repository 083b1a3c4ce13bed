#!/usr/bin/env bash
# Reference solution: Decimal of the written value with ROUND_HALF_UP; spread the remainder cents.
set -euo pipefail
cat > money.py <<'EOF'
"""Formatting and splitting of money amounts."""

from decimal import ROUND_HALF_UP, Decimal


def format_price(amount):
    """Dollars with thousands separators and two decimals, halves rounded away from zero."""
    # str() gives the shortest repr, i.e. the value as written (2.675, not 2.67499999...).
    cents = Decimal(str(amount)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    if cents == 0:
        return "$0.00"
    sign = "-" if cents < 0 else ""
    return f"{sign}${abs(cents):,.2f}"


def split_bill(total_cents, people):
    """Split an amount in cents into `people` integer shares that add up to the total."""
    if people < 1:
        raise ValueError(f"people must be at least 1, got {people}")
    base, extra = divmod(total_cents, people)
    return [base + 1] * extra + [base] * (people - extra)
EOF
