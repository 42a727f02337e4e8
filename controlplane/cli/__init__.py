"""The `tandem` command line: its parser and dispatch, and one module per group of commands."""
