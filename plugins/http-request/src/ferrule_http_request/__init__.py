"""The http_request operator plugin."""
