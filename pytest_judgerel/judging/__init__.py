"""Judging: the judge (templates, scales, sampling), its replies' parsers, the seed-001
templates and the vendored human-rated data sets."""
