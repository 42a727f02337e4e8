"""What a launch needs decided first: measured costs and rate shares, the batch-time model, placement on cores."""
