"""One launch of the data plane: the machine prepared, the manager started and watched, the results collected."""
