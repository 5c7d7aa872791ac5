"""Reference solutions of the exercises, one module per lesson (for instructors and tests)."""
