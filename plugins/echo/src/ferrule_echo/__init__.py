"""The echo operator plugin."""
