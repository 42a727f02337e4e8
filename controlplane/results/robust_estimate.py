"""Robust statistics for profiled costs: a median with its spread between rounds, and a Theil-Sen line (SciPy)
whose fixed cost is clamped at zero and flagged."""

from __future__ import annotations

import numpy
from scipy import stats

# Above this spread an estimate is flagged: `tandem profile` marks it and runs that use it warn, naming the NF.
SPREAD_WARNING = 0.15


def spread(values) -> float:
    """How far the middle 80 % of `values` reach from their median, as a fraction of it: ±spread.

    (p90 - p10) / 2 / median, so 0.10 means the middle 80 % lie within about ±10 % of the median."""
    values = numpy.asarray(list(values), dtype=float)
    if values.size < 2:
        return 0.0
    middle = float(numpy.median(values))
    if middle <= 0:
        return float("inf")
    low, high = numpy.percentile(values, [10, 90])
    return float(high - low) / 2 / middle


def median_with_spread(values) -> dict:
    values = [float(v) for v in values]
    if not values:
        raise ValueError("no values to estimate from")
    return {"value": float(numpy.median(values)), "spread": spread(values), "samples": len(values)}


def theil_sen_line(x, y) -> dict:
    """y = k*x + c by Theil-Sen (the median of the pairwise slopes; scipy.stats.theilslopes), which a few outlying
    points cannot drag, unlike least squares. A fixed cost c below zero is physically impossible (a batch cannot
    take less than nothing): it is clamped to 0, and the raw value is kept and flagged."""
    x, y = numpy.asarray(x, dtype=float), numpy.asarray(y, dtype=float)
    if x.size < 2 or numpy.unique(x).size < 2:
        raise ValueError("a line needs points at two x values at least")
    fit = stats.theilslopes(y, x)
    k = float(fit.slope)
    c = float(numpy.median(y - k * x))  # the intercept that goes with the robust slope
    line = {"k": k, "c": max(c, 0.0), "c_clamped": c < 0}
    if c < 0:
        line["c_raw"] = c
    return line
