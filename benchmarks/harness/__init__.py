"""What the benchmark scripts share: the fake server in its own process, the raw-httpx and
bare-litellm CPU floors (servers), thread-CPU profilers (profiling).  Benchmarks import these and
the package, never the tests' helpers."""
