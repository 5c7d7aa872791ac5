"""Exercise checkers for lesson 07."""
