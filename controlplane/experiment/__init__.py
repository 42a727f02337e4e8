"""Runs of a spec: one run through validate, place, cost and launch (pipeline), and comparisons of schedulers."""
