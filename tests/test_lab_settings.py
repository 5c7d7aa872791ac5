"""The course's JupyterLab settings (attnlab_server.LAB_SETTINGS_DIR, tools/write_lab_settings.py):
up to date with the installed JupyterLab, passed by `make lab`; a font named there has every
Vietnamese letter (the browser check is tests/test_browser_room.py)."""
import json
import pathlib
import re
import sys
import unicodedata

import attnlab_server

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import write_lab_settings as tool  # noqa: E402

VIETNAMESE = [unicodedata.normalize("NFC", base + mark) for base in "aăâeêioôơuưyAĂÂEÊIOÔƠUƯY"
              for mark in ("", "\u0300", "\u0301", "\u0309", "\u0303", "\u0323")] + ["đ", "Đ"]


def test_the_settings_are_those_the_tool_writes_for_this_jupyterlab():
    """A JupyterLab upgrade with another single-key shortcut fails here: run the tool again."""
    shipped = json.loads((attnlab_server.LAB_SETTINGS_DIR / "overrides.json").read_text(encoding="utf-8"))
    assert shipped == json.loads(json.dumps(tool.settings(tool.lab_schemas())))
    for path, value in tool.user_settings().items():
        assert json.loads(path.read_text(encoding="utf-8")) == value, path


def _shipped_shortcuts():
    return json.loads((attnlab_server.LAB_SETTINGS_DIR / "overrides.json").read_text(encoding="utf-8"))[
        "@jupyterlab/shortcuts-extension:shortcuts"]["shortcuts"]


def test_every_command_mode_shortcut_skips_focused_controls_in_outputs():
    """Run under the pinned JupyterLab and under the newest on Python 3.9 (4.5, the floor row of
    `make matrix`): each release's defaults that fire on any focus are off, and back where no control
    in an output can reach them."""
    defaults = tool.default_shortcuts(tool.lab_schemas())
    shortcuts = _shipped_shortcuts()
    commands = {s["command"] for s in defaults}
    assert {"notebook:move-cursor-down", "notebook:move-cursor-up", "notebook:insert-cell-above"} <= commands
    for s in defaults:
        same = [x for x in shortcuts if x["command"] == s["command"] and x["keys"] == s["keys"]]
        assert {"disabled": True, **s} in same, s                       # the default, off
        assert any(tool.never_in_outputs(x["selector"]) and "disabled" not in x for x in same), s   # and back
    assert not [x for x in shortcuts if "disabled" not in x and not tool.never_in_outputs(x["selector"])]


def test_earlier_releases_bindings_are_replaced_by_the_pinned_ones():
    """JupyterLab 4.1-4.5 bind the heading keys 1-6 to any focus (tools/earlier_lab_shortcuts.json):
    off, and bound again with the pinned release's selector outside outputs (a selector of its own:
    the same one as a default would be dropped); the installed release binds each command and keys
    with the recorded selector of either generation. In a browser, under 4.6.6 and 4.5.11:
    test_browser_room.py::test_lab_keys_typed_in_an_output_control_stay_there."""
    earlier = tool.earlier_shortcuts()
    assert [s["keys"] for s in earlier] == [[str(n)] for n in range(1, 7)]
    installed = tool._shortcuts(tool._schema_files(tool.lab_schemas()))
    shortcuts = _shipped_shortcuts()
    for s in earlier:
        old = {k: s[k] for k in ("command", "keys", "selector")}
        pinned = {**old, "selector": s["pinned_selector"]}
        assert tool.fires_on_any_focus(old) and not tool.fires_on_any_focus(pinned)
        assert pinned["selector"].endswith(".jp-MarkdownCell:focus")
        here = [x["selector"] for x in installed if x["command"] == s["command"] and x["keys"] == s["keys"]]
        assert len(here) == 1 and here[0] in (old["selector"], pinned["selector"]), (s, here)
        same = [x for x in shortcuts if x["command"] == s["command"] and x["keys"] == s["keys"]]
        again = {**old, "selector": pinned["selector"] + ":not(.jp-OutputArea-output *)"}
        assert same == [again, {**old, "disabled": True}], same


def test_seeding_the_user_settings_keeps_a_students_own(tmp_path):
    written = attnlab_server.seed_user_settings(tmp_path)
    themes = tmp_path / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings"
    assert written == [themes] and "Noto Sans Mono" in themes.read_text(encoding="utf-8")
    themes.write_text('{"overrides": {"code-font-family": "mine"}}', encoding="utf-8")
    assert attnlab_server.seed_user_settings(tmp_path) == [] and "mine" in themes.read_text(encoding="utf-8")


def test_make_lab_passes_the_settings():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    lab = re.search(r"^lab:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
    assert "attnlab_server.seed_user_settings(sys.argv[1])" in lab and "$(LAB_ARGS)" in lab
    args = re.search(r"^LAB_ARGS := ((?:.*\\\n)*.*)", makefile, re.M).group(1).replace("\\\n", " ").split()
    folder = "$(LAB_USER_SETTINGS)"
    assert args == [a.replace(str(ROOT), "$(CURDIR)").replace("$(CURDIR)/build/lab/user-settings", folder)
                    for a in attnlab_server.lab_args(ROOT / "build" / "lab" / "user-settings")]


def test_the_first_font_debian_installs_has_every_vietnamese_letter():
    """Noto Sans Mono CJK SC (fonts-noto-cjk, which .ci/run installs): every precomposed letter."""
    import shutil
    import subprocess

    import pytest
    from fontTools.ttLib import TTCollection, TTFont

    if not shutil.which("fc-match"):
        pytest.skip("no fontconfig (fc-match) to find the font")
    family = "Noto Sans Mono CJK SC"
    assert f'"{family}"' in tool.CODE_FONT
    found = subprocess.run(["fc-match", "-f", "%{file}|%{family}", family], capture_output=True, text=True).stdout
    path, _, families = found.partition("|")
    if family not in families.split(","):
        pytest.skip(f"{family} is not installed (apt install fonts-noto-cjk)")
    fonts = TTCollection(path).fonts if path.endswith(".ttc") else [TTFont(path)]
    face = next(f for f in fonts if family in {n.toUnicode() for n in f["name"].names if n.nameID == 1})
    missing = [ch for ch in VIETNAMESE if ord(ch) not in face.getBestCmap()]
    assert not missing, missing
