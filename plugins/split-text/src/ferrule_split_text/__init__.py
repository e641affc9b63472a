"""The split_text operator plugin: split_text and split_text_by_separator."""
