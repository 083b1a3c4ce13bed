"""Greedy word wrapping."""


def wrap(text, width):
    """Split `text` into lines of at most `width` characters."""
    lines = []
    line = ""
    for word in text.split():
        if len(line) + len(word) + 1 < width:
            line = f"{line} {word}" if line else word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines
