"""Write shared/attnlab_server/lab_settings/: the JupyterLab settings of the course.

    python tools/write_lab_settings.py        # after upgrading JupyterLab (tests/test_lab_settings.py says when)

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
"""
from __future__ import annotations

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
FOLDER = ROOT / "shared" / "attnlab_server" / "lab_settings"
OUT = FOLDER / "overrides.json"
THEMES = FOLDER / "user" / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings"
CODE_FONT = ('"Noto Sans Mono", "Noto Sans Mono CJK SC", "Source Han Mono SC", "Cascadia Mono", Consolas, '
             '"DejaVu Sans Mono", monospace')
FOCUS = ":focus"
OUTSIDE_OUTPUTS = ":focus:not(.jp-OutputArea-output *)"


def default_shortcuts(schemas: pathlib.Path) -> list[dict]:
    """The installed JupyterLab's default shortcuts that fire on any focused element in a notebook
    in command mode (the selector ends with `` :focus``)."""
    found = []
    for path in sorted(schemas.glob("@jupyterlab/*/*.json")):
        for s in json.loads(path.read_text(encoding="utf-8")).get("jupyter.lab.shortcuts", []):
            if ".jp-mod-commandMode" in s["selector"] and s["selector"].endswith(" " + FOCUS):
                found.append({k: s[k] for k in ("command", "keys", "selector")} | ({"args": s["args"]} if "args" in s else {}))
    return found


def settings(schemas: pathlib.Path) -> dict:
    shortcuts = []
    for s in default_shortcuts(schemas):
        shortcuts.append({**s, "disabled": True})
        shortcuts.append({**s, "selector": s["selector"][:-len(FOCUS)] + OUTSIDE_OUTPUTS})
    return {"@jupyterlab/shortcuts-extension:shortcuts": {"shortcuts": shortcuts}}


def lab_schemas() -> pathlib.Path:
    import jupyterlab

    prefix = pathlib.Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas"
    return prefix if prefix.is_dir() else pathlib.Path(jupyterlab.__file__).parent / "schemas"


def user_settings() -> dict:
    return {THEMES: {"overrides": {"code-font-family": CODE_FONT}}}


def main() -> None:
    for path, value in {OUT: settings(lab_schemas()), **user_settings()}.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
