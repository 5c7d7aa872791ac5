import pytest

import attnlab


@pytest.fixture(autouse=True)
def english():
    """Every test starts in English and leaves the course language as it found it."""
    before = attnlab.get_language()
    attnlab.set_language("en")
    yield
    attnlab.set_language(before)
