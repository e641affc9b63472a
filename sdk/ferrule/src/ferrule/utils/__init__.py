"""Agno's ``agno.utils``: `ferrule.utils.pprint` (``pprint_run_response``) and
`ferrule.utils.log` (``logger``, ``log_info``...)."""
