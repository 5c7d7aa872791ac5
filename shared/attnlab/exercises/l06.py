"""Exercise checkers for lesson 06."""
