"""A test LTI 1.3 platform (Canvas's part) on loopback: the referee of the tool's requests."""
