"""Agno's ``agno.utils.models``: what model settings take (`claude`)."""
