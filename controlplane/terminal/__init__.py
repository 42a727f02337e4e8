"""What the user reads on the terminal: aligned tables and numbers, a run's live progress line."""
