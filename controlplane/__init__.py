"""Tandem's control plane: validate specs, prepare the machine, launch the data plane, report results."""
