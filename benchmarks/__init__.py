"""Scripts that measure the project, run as ``python -m benchmarks.<room>.<script>`` (see README.md)."""
