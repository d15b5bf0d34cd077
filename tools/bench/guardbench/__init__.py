"""guard's benchmark (issue 12): workloads on real trees, bare and traced."""
