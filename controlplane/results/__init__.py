"""Results of runs and comparisons: typed models, text reports, plots, explanations, live metrics, robust statistics."""
