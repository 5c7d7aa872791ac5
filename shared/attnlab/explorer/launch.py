"""How the explorer is opened: ``explore(**defaults)`` in a lesson, ``dashboard()`` as the
instructor's page (``notebooks/attention_explorer.ipynb`` served by Voilà), with ``lang`` and
``large`` read from the page's address."""
from __future__ import annotations

import os
import urllib.parse

from ..course.i18n import LANGUAGES
from .widgets import AttentionExplorer

TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def explore(**defaults) -> AttentionExplorer:
    """The interactive explorer, e.g. ``attnlab.explore(mask="causal", num_heads=2)``, or the
    trained reversal model of lesson 07: ``attnlab.explore(model="trained", digits="3 1 4 1 5 9")``,
    or lesson 10's verse GPT on a verse of its validation text: ``attnlab.explore(model="poet-vi")``.

    Keyword arguments are ``ExplorerState`` fields; ``lang`` defaults to the current
    language and ``sentence`` to its example sentence. Put it last in a cell (or display it).
    """
    return AttentionExplorer(**defaults)


def query_settings(query: str | None = None) -> dict:
    """``lang`` and ``large`` from a page's query string, e.g. ``"lang=vi&large=1"`` ->
    ``{"lang": "vi", "large": True}``; other keys and values it does not know are left out.

    ``query`` defaults to the ``QUERY_STRING`` that Voilà gives the kernel of each page (empty
    in JupyterLab), so that ``http://localhost:8866/?lang=vi&large=1`` (``make voila``) opens the
    dashboard in Vietnamese, in large font: a bookmark for the lecture hall (a reload keeps it).
    """
    query = os.environ.get("QUERY_STRING", "") if query is None else query
    values = {key: vals[-1].strip().lower() for key, vals in urllib.parse.parse_qs(query).items()}
    settings = {}
    if values.get("lang") in LANGUAGES:
        settings["lang"] = values["lang"]
    if values.get("large") in TRUE_WORDS + FALSE_WORDS:
        settings["large"] = values["large"] in TRUE_WORDS
    return settings


def dashboard(**defaults) -> AttentionExplorer:
    """The explorer with the dashboard's explanation under it (notebooks/attention_explorer.ipynb);
    the page's ``?lang=…&large=…`` (``query_settings``) override ``defaults``."""
    return AttentionExplorer(prose=True, **{**defaults, **query_settings()})
