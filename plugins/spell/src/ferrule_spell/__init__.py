"""The spell streaming operator plugin."""
