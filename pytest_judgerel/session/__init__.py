"""The session: its settings (every option, ini key and environment variable), the current
context (settings, endpoint, client) and the records gates hand to the report."""
