"""Who handed in what: the submissions in nbgrader's exchange not sent by the student they name.

    python hub/check_inbound.py                    # the hub's exchange (ATTNLAB_EXCHANGE, hub/layout.py)
    python hub/check_inbound.py --exchange DIR     # another exchange

nbgrader's exchange takes the student id a submission claims: a student can run ``nbgrader submit
ps1 --CourseDirectory.student_id=<someone else>``, and ``nbgrader collect`` then takes that
submission as the other student's (the newest per id wins). It cannot forge the owner: on the
course's hub each student is their own system user, and a submission (``inbound/<id>+<assignment>+
<time>+<random>``) belongs to the user who sent it; nbgrader names it after the sender's system
user (``jupyter-NAME``). Run this as root before ``nbgrader collect``: it lists every submission
whose owner, or the owner of a file in it, is not the user it is named after, and exits 1 when
there is one (remove those before collecting). Nothing is changed.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import pwd
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from layout import Layout  # noqa: E402

COURSE_ID = "attnlab"             # nbgrader's course id (hub/nbgrader_config.py)


def _owner(path: pathlib.Path) -> str:
    uid = path.lstat().st_uid
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def mismatched(inbound: pathlib.Path) -> list[tuple[str, str, str]]:
    """(submission, the name it claims, who actually owns it or a file in it) for each one whose
    owner is not the user it names; [] when every submission was sent by its student."""
    found = []
    for entry in sorted(inbound.iterdir()):
        claimed = entry.name.split("+", 1)[0]
        owners = {_owner(entry)}
        if entry.is_dir() and not entry.is_symlink():
            owners |= {_owner(p) for p in entry.rglob("*")}
        if owners != {claimed}:
            found.append((entry.name, claimed, ", ".join(sorted(owners - {claimed}))))
    return found


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exchange", type=pathlib.Path, default=None,
                    help="nbgrader's exchange (default: the hub's, ATTNLAB_EXCHANGE or STATE/exchange)")
    ap.add_argument("--course", default=COURSE_ID, help="nbgrader's course id")
    args = ap.parse_args(argv)
    inbound = (args.exchange or Layout.from_env().exchange) / args.course / "inbound"
    if not inbound.is_dir():
        print(f"check_inbound: {inbound} is not a folder (no exchange, or no submission yet)", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("check_inbound: run it as root: nobody else can list the exchange's inbound folder", file=sys.stderr)
        return 2
    bad = mismatched(inbound)
    for name, claimed, owner in bad:
        print(f"NOT sent by {claimed}: {inbound / name} (owner: {owner})")
    total = sum(1 for _ in inbound.iterdir())
    print(f"{total - len(bad)} of {total} submissions sent by the student they name"
          + (f"; remove the {len(bad)} above before `nbgrader collect`" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
