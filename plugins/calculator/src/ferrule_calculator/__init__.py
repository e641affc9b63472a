"""The calculator operator plugin: safe arithmetic evaluation."""
