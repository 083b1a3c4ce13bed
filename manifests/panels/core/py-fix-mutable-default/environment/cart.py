"""A shopping cart and a small tag helper."""


class Cart:
    """Items are (name, quantity) pairs."""

    def __init__(self, items=[]):
        self.items = items

    def add(self, name, qty=1):
        self.items.append((name, qty))
        return self

    def total_quantity(self):
        return sum(qty for _, qty in self.items)


def add_tag(tag, tags=[]):
    """Append `tag` to `tags` and return the list."""
    tags.append(tag)
    return tags
