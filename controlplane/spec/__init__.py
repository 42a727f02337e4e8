"""The spec: models and limits, loading and checks, the data plane's catalog, the deployment it becomes."""
