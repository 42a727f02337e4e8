"""Plain text for the terminal: aligned tables, counts and numbers."""

from __future__ import annotations


def table(headers: list[str], rows: list[list], align_left: int = 1) -> str:
    """A plain aligned table; the first `align_left` columns are left-aligned, the rest right-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for index, row in enumerate(cells):
        parts = [
            c.ljust(w) if i < align_left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=False))
        ]
        lines.append("  ".join(parts).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def count(n: int | float) -> str:
    return f"{int(n):,}"


def number(value, digits: int = 2, scale: float = 1.0) -> str:
    return "n/a" if value is None else f"{value * scale:.{digits}f}"
