"""Plain-text tables for terminal output."""


def render(rows):
    """Render rows (lists of cells) as an aligned table; the first row is the header."""
    if not rows:
        return ""
    texts = [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in texts) for i in range(len(texts[0]))]
    lines = []
    for n, row in enumerate(texts):
        cells = [cell + " " * (width - len(cell)) for cell, width in zip(row, widths)]
        lines.append(" | ".join(cells).rstrip())
        if n == 0:
            lines.append("-+-".join("-" * width for width in widths))
    return "\n".join(lines)
