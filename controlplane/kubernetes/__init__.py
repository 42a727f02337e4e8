"""Tandem on Kubernetes: the ServiceChain resource, its CRD generated from the spec's models."""
