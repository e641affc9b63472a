"""Agno's ``agno.utils``: `ferrule.utils.pprint` (``pprint_run_response``)."""
