"""Formatting and splitting of money amounts."""


def format_price(amount):
    """Dollars with thousands separators and two decimals, halves rounded away from zero."""
    return f"${round(amount, 2):,.2f}"


def split_bill(total_cents, people):
    """Split an amount in cents into `people` integer shares that add up to the total."""
    return [total_cents // people] * people
