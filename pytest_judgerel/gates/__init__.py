"""Gates: the assertion helpers (reliability, agreement, probes, human-scale means), what every
gate adds to its record (verdict stability, repeats needed) and the one conclusion they end in.
The public names are exported by :mod:`pytest_judgerel`."""
