def mean(values):
    values = list(values)
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / len(values)


def median(values):
    values = sorted(values)
    if not values:
        raise ValueError("median of an empty list")
    return values[len(values) // 2]
