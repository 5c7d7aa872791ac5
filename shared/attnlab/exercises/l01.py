"""Exercise checkers for lesson 01."""
