"""The machine a run uses: its cores, the changes Tandem makes to it (journaled and undone), what is measured of it."""
