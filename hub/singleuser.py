"""A student's server: update their copy of the course, set their JupyterLab language, start.

The hub runs this instead of ``jupyterhub-singleuser`` (``c.Spawner.cmd``; the Kubernetes image
does the same), as the student, in the student's home:

1. The course (``ATTNLAB_COURSE_URL``, a git repository, see hub/publish_course.py) is pulled
   into ``~/ATTNLAB_COURSE_DIR`` with nbgitpuller: the first time it is cloned; later, new and
   updated lessons arrive while every file the student edited stays as they left it
   (nbgitpuller's merge rules). If the course cannot be reached the server starts anyway with the
   copy the student has, and says so in the server's log.
2. ``ATTNLAB_LOCALE`` (vi_VN or zh_CN, set by the hub from the student's group) becomes the
   student's JupyterLab language, unless the student already chose one (Settings > Language).
3. The course's JupyterLab settings (attnlab_server, as ``make lab`` gives them): the shortcut
   overrides that keep the explorer's keys in its controls (``--LabApp.app_settings_dir``), and the
   code font with every Vietnamese letter copied into the student's own settings where they have
   none (their own change stays).
4. ``jupyterhub-singleuser`` replaces this process, with the arguments the hub gave.
"""
from __future__ import annotations

import json
import os
import pathlib
import sys

LOCALES = ("vi_VN", "zh_CN", "en")
_TRANSLATION_SETTINGS = ("@jupyterlab", "translation-extension", "plugin.jupyterlab-settings")


def _say(message: str) -> None:
    print(f"[attnlab hub] {message}", file=sys.stderr, flush=True)


def update_course(home: pathlib.Path) -> bool:
    """Pull the course into home/ATTNLAB_COURSE_DIR; False (and a message) when it failed."""
    url = os.environ.get("ATTNLAB_COURSE_URL")
    if not url:
        return True
    from nbgitpuller.pull import GitPuller

    target = home / os.environ.get("ATTNLAB_COURSE_DIR", "attnlab-course")
    branch = os.environ.get("ATTNLAB_COURSE_BRANCH") or None
    try:
        for line in GitPuller(url, str(target), branch=branch, depth=0).pull():
            _say(line.rstrip())
    except Exception as err:  # the server must start even when the course source is down
        _say(f"the course could not be updated from {url} ({type(err).__name__}: {err}); "
             f"starting with the copy in {target}")
        return False
    return True


def set_locale(locale: str | None) -> None:
    """Write the student's JupyterLab language setting unless they already have one."""
    if not locale:
        return
    if locale not in LOCALES:
        _say(f"ATTNLAB_LOCALE={locale!r} is not one of {', '.join(LOCALES)}; language left as is")
        return
    from jupyterlab.commands import get_user_settings_dir

    path = pathlib.Path(get_user_settings_dir()).joinpath(*_TRANSLATION_SETTINGS)
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"locale": locale}) + "\n", encoding="utf-8")


def lab_settings() -> list[str]:
    """Seed the student's JupyterLab user settings with the course's; the server's extra arguments."""
    import attnlab_server
    from jupyterlab.commands import get_user_settings_dir

    attnlab_server.seed_user_settings(get_user_settings_dir())
    return [f"--LabApp.app_settings_dir={attnlab_server.LAB_SETTINGS_DIR}"]


def main(argv: list[str]) -> None:
    home = pathlib.Path(os.environ.get("HOME") or os.getcwd())
    update_course(home)
    set_locale(os.environ.get("ATTNLAB_LOCALE"))
    extra = lab_settings()
    os.execv(sys.executable, [sys.executable, "-m", "jupyterhub.singleuser", *argv, *extra])


if __name__ == "__main__":
    main(sys.argv[1:])
