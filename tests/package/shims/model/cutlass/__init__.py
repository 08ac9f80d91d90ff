"""`cutlass` as the bundled 4.6.1 model, for running examples/ without the real DSL."""
