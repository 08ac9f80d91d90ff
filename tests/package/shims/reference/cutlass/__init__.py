"""`cutlass` as leakgate's reference runtime, for running examples/ without the real DSL."""
