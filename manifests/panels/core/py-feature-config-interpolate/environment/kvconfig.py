"""A tiny `key = value` configuration format."""


def parse(text):
    """Parse `key = value` lines into a dict; blank lines and `#` comments are skipped."""
    result = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise ValueError(f"line {number}: expected 'key = value'")
        key, value = line.split("=", 1)
        result[key.strip()] = value.strip()
    return result
