"""Exercise checkers for lesson 04."""
