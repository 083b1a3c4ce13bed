"""Plain-text sales report."""


def build_report(orders):
    """Report of order amounts for the north and south regions and overall.

    `orders` is a list of dicts with "region" and "amount" keys.
    """
    lines = []

    north = [o["amount"] for o in orders if o["region"] == "north"]
    north_count = len(north)
    north_total = sum(north)
    north_mean = north_total / north_count if north_count else 0.0
    north_max = max(north) if north else None
    lines.append(f"north: {north_count} orders, total {north_total:.2f}, mean {north_mean:.2f}, max {north_max}")

    south = [o["amount"] for o in orders if o["region"] == "south"]
    south_count = len(south)
    south_total = sum(south)
    south_mean = south_total / south_count if south_count else 0.0
    south_max = max(south) if south else None
    lines.append(f"south: {south_count} orders, total {south_total:.2f}, mean {south_mean:.2f}, max {south_max}")

    everything = [o["amount"] for o in orders]
    all_count = len(everything)
    all_total = sum(everything)
    all_mean = all_total / all_count if all_count else 0.0
    all_max = max(everything) if everything else None
    lines.append(f"all: {all_count} orders, total {all_total:.2f}, mean {all_mean:.2f}, max {all_max}")

    return "\n".join(lines)
