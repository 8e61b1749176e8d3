"""jobquake's own tests.

``tests/ownapp`` is a project of its own (its pyproject, its scenarios),
run from its own folder by ``tests/integration/test_ownapp.py``; it is not
collected as part of this suite.
"""
collect_ignore = ["ownapp"]
