"""Write shared/attnlab_server/lab_settings/: the JupyterLab settings of the course.

    python tools/write_lab_settings.py        # after upgrading JupyterLab (tests/test_lab_settings.py says when)
    python tools/write_lab_settings.py --record jupyterlab-4.1.8-py3-none-any.whl ...   # earlier releases

`make lab` (and the hub) start JupyterLab with ``attnlab_server.lab_args``: that folder as the
``app_settings_dir`` (overrides.json: defaults) and the files under ``user/`` copied into the user
settings where missing (JupyterLab 4 applies a theme's font only from the user's settings).

* **Fonts** (``user/@jupyterlab/apputils-extension/themes.jupyterlab-settings``). JupyterLab's code
  and output font is ``menlo, consolas, "DejaVu Sans Mono", monospace``; on Linux that is DejaVu
  Sans Mono, which has no precomposed Vietnamese letters with two marks ("ủ", "ế", "ầ"...): Chromium
  builds them from pieces ("cu̓a", "dâ´u"). The course names fonts that have every one of them:
  Noto Sans Mono, then Noto Sans Mono CJK SC (Debian's ``fonts-noto-cjk``, which .ci/run installs;
  it draws Chinese on the same grid), Source Han Mono SC, Cascadia Mono, Consolas.

* **Keys stay in the widgets.** In command mode the notebook takes single keys (↓ ↑ ← →, A, B, M, D D,
  Y, ...) from any focused element that is not a text field, so ↓ on a focused explorer dropdown
  moved the notebook's active cell instead of changing the value. Every such default shortcut of the
  installed JupyterLab (selector ``… :focus``) is disabled and added again with
  ``:focus:not(.jp-OutputArea-output *)``: the same shortcut, except while a control inside a cell's
  output (a widget) has the focus.

* **Earlier JupyterLab releases.** JupyterLab 4.1 to 4.5 (4.5 is the newest on Python 3.9) also bind
  the heading keys 1–6 to any focused element; the pinned 4.6 binds them to a focused markdown cell.
  ``tools/earlier_lab_shortcuts.json`` records such bindings (``--record`` reads them from
  JupyterLab wheels); each is disabled and bound again with the pinned release's selector followed
  by ``:not(.jp-OutputArea-output *)``, so every release behaves as the pinned one. JupyterLab reads
  this file's shortcuts as defaults: a second enabled default with the very same keys and selector
  is dropped with a console warning, and a disabled one turns off every default of its selector,
  hence the suffix, a selector of its own for the same focused markdown cell (no cell is inside an
  output). Under 4.6 the key then has two bindings, and one command runs (tested in a browser).
"""
from __future__ import annotations

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
FOLDER = ROOT / "shared" / "attnlab_server" / "lab_settings"
OUT = FOLDER / "overrides.json"
EARLIER = ROOT / "tools" / "earlier_lab_shortcuts.json"
THEMES = FOLDER / "user" / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings"
CODE_FONT = ('"Noto Sans Mono", "Noto Sans Mono CJK SC", "Source Han Mono SC", "Cascadia Mono", Consolas, '
             '"DejaVu Sans Mono", monospace')
FOCUS = ":focus"
NOT_IN_OUTPUTS = ":not(.jp-OutputArea-output *)"    # no focused control inside a cell's output
OUTSIDE_OUTPUTS = FOCUS + NOT_IN_OUTPUTS


def _shortcuts(files) -> list[dict]:
    """Every default shortcut in these (name, schema text) pairs, as command, keys, selector (, args)."""
    found = []
    for _, text in sorted(files):
        for s in json.loads(text).get("jupyter.lab.shortcuts", []):
            found.append({k: s[k] for k in ("command", "keys", "selector")} | ({"args": s["args"]} if "args" in s else {}))
    return found


def _schema_files(schemas: pathlib.Path):
    return [(str(p.relative_to(schemas)), p.read_text(encoding="utf-8")) for p in schemas.glob("@jupyterlab/*/*.json")]


def fires_on_any_focus(s: dict) -> bool:
    """A notebook shortcut in command mode that fires on any focused element (`` … :focus``)."""
    return ".jp-mod-commandMode" in s["selector"] and s["selector"].endswith(" " + FOCUS)


def default_shortcuts(schemas: pathlib.Path) -> list[dict]:
    """The installed JupyterLab's default shortcuts that fire on any focused element in a notebook
    in command mode (the selector ends with `` :focus``)."""
    return [s for s in _shortcuts(_schema_files(schemas)) if fires_on_any_focus(s)]


def earlier_shortcuts() -> list[dict]:
    """The bindings of JupyterLab 4.1–4.5 that fire on any focus where the pinned release does not
    (``earlier_lab_shortcuts.json``), each with ``pinned_selector``, the pinned release's selector."""
    return json.loads(EARLIER.read_text(encoding="utf-8"))["shortcuts"]


def never_in_outputs(selector: str) -> bool:
    """A selector that no control inside a cell's output can match while it has the focus."""
    return selector.endswith(OUTSIDE_OUTPUTS)


def settings(schemas: pathlib.Path) -> dict:
    earlier = earlier_shortcuts()
    seen = [{k: v for k, v in s.items() if k != "pinned_selector"} for s in earlier]
    shortcuts = []
    for s in default_shortcuts(schemas):
        if s not in seen:                     # under JupyterLab 4.1-4.5 the headings are in both
            shortcuts.append({**s, "disabled": True})
            shortcuts.append({**s, "selector": s["selector"][:-len(FOCUS)] + OUTSIDE_OUTPUTS})
    for s, old in zip(earlier, seen):                 # off, and the pinned binding (outside outputs, as above)
        shortcuts += [{**old, "disabled": True}, {**old, "selector": s["pinned_selector"] + NOT_IN_OUTPUTS}]
    # One order whichever release wrote it; a selector's enabled entry before its disabled one.
    shortcuts.sort(key=lambda s: (s["command"], s["keys"], s["selector"], "disabled" in s))
    return {"@jupyterlab/shortcuts-extension:shortcuts": {"shortcuts": shortcuts}}


def record(wheels: list[str], schemas: pathlib.Path) -> dict:
    """From JupyterLab wheels: their bindings that fire on any focus where the installed release binds
    the same command and keys with another selector that does not."""
    import zipfile

    pinned: dict[tuple, list[str]] = {}
    for s in _shortcuts(_schema_files(schemas)):
        pinned.setdefault((s["command"], tuple(s["keys"])), []).append(s["selector"])
    found, releases = [], []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            releases.append(pathlib.Path(wheel).name.split("-")[1])
            files = [(n, z.read(n).decode("utf-8")) for n in z.namelist()
                     if "/schemas/@jupyterlab/" in n and ".data/" not in n and n.endswith(".json")]
        for s in _shortcuts(files):
            now = pinned.get((s["command"], tuple(s["keys"])), [])
            if fires_on_any_focus(s) and len(now) == 1 and not fires_on_any_focus({**s, "selector": now[0]}):
                entry = {**s, "pinned_selector": now[0]}
                if entry not in found:
                    found.append(entry)
    import jupyterlab

    return {"about": f"Command-mode shortcuts of JupyterLab {', '.join(releases)} that fire on any focused element "
                     f"where JupyterLab {jupyterlab.__version__} (pinned) binds the same command and keys otherwise "
                     f"(pinned_selector). Written by tools/write_lab_settings.py --record.",
            "shortcuts": found}


def lab_schemas() -> pathlib.Path:
    import jupyterlab

    prefix = pathlib.Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas"
    return prefix if prefix.is_dir() else pathlib.Path(jupyterlab.__file__).parent / "schemas"


def user_settings() -> dict:
    return {THEMES: {"overrides": {"code-font-family": CODE_FONT}}}


def main(argv: list[str]) -> None:
    if argv[:1] == ["--record"]:                     # --record jupyterlab-4.1.8-py3-none-any.whl ...
        EARLIER.write_text(json.dumps(record(argv[1:], lab_schemas()), indent=1, ensure_ascii=False) + "\n",
                           encoding="utf-8")
        print(f"wrote {EARLIER.relative_to(ROOT)}")
    for path, value in {OUT: settings(lab_schemas()), **user_settings()}.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
