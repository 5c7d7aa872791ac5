"""Who may log in to the course's hub, and the system account each of them runs as.

Every hub user NAME is the system user ``Layout.system_name(NAME)`` (``jupyter-NAME``), created
when the instructor adds them (hub/admin.py, /hub/admin) or, after sign-up and approval, at their
first log-in: its own private group, a member of the course's group, home 0700. A name that
already belongs to a system account the hub did not make (root, daemon, a member of staff) is
refused, never reused.

Two ways to log in, both built on JupyterHub's own authenticators:

- ``CourseSignUpAuthenticator`` (the default): NativeAuthenticator. Students sign up on
  /hub/signup with a password of their own; nobody can log in until the instructor approves the
  sign-up on /hub/authorize. A sign-up is never approved by itself: not for a name the instructor
  already added, not for the instructor's own name (NativeAuthenticator would approve both). The
  instructor (``admin_users``) logs in only with the password in the hub's private folder,
  which no sign-up can claim or change.
- ``CourseClassPasswordAuthenticator`` (``ATTNLAB_HUB_AUTH=class-password``, a workshop): one
  password for the whole class (JupyterHub's SharedPasswordAuthenticator), only for the users the
  instructor added. It gives up who-is-who: anyone with the class password can log in as any
  listed student and see their files. Students still run as their own system users.
"""
from __future__ import annotations

import grp
import hmac
import os
import pwd
import re
import shutil
import subprocess

from jupyterhub.auth import LocalAuthenticator
from jupyterhub.authenticators.shared import SharedPasswordAuthenticator
from nativeauthenticator import NativeAuthenticator
from traitlets import Unicode, default

from layout import MAX_SYSTEM_NAME

NAME = re.compile(r"^[a-z0-9][a-z0-9._@-]*$")   # what hub/admin.py accepts, lowercased


class AccountError(Exception):
    """A system account that cannot be made or used; the message says which and why."""


# ------------------------------------------------------------------ system accounts

def ensure_group(group: str) -> int:
    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        _run(["groupadd", "--system", group])
        return grp.getgrnam(group).gr_gid


def is_course_account(system_name: str, group: str) -> bool:
    """True when the system user exists and is a member of the course's group."""
    try:
        pw = pwd.getpwnam(system_name)
        gid = grp.getgrnam(group).gr_gid
    except KeyError:
        return False
    return gid in os.getgrouplist(system_name, pw.pw_gid)


def create_account(system_name: str, group: str, home) -> pwd.struct_passwd:
    """The student's system user: own group, member of ``group``, no password, home 0700."""
    if len(system_name) > MAX_SYSTEM_NAME:
        raise AccountError(f"{system_name!r}: longer than {MAX_SYSTEM_NAME} characters")
    try:
        pwd.getpwnam(system_name)
    except KeyError:
        pass
    else:
        if not is_course_account(system_name, group):
            raise AccountError(f"{system_name!r} is a system account that is not one of the "
                               f"course's (not in the group {group}); choose another name")
        return _own_home(system_name, home)
    ensure_group(group)
    os.makedirs(os.path.dirname(os.fspath(home)), mode=0o755, exist_ok=True)
    _run(["useradd", "--create-home", "--home-dir", os.fspath(home), "--user-group",
          "--groups", group, "--shell", "/bin/bash", "--comment", "attnlab hub user",
          system_name])
    return _own_home(system_name, home)


def _own_home(system_name: str, home) -> pwd.struct_passwd:
    pw = pwd.getpwnam(system_name)
    if os.path.realpath(pw.pw_dir) != os.path.realpath(home):
        raise AccountError(f"{system_name!r} has the home {pw.pw_dir}, not {home}")
    os.makedirs(home, exist_ok=True)
    os.chown(home, pw.pw_uid, pw.pw_gid)
    os.chmod(home, 0o700)          # useradd makes it 0755 (UMASK 022): nobody else looks in
    return pw


def delete_account(system_name: str, remove_home: bool = True) -> None:
    """userdel (tests and benchmarks clean up with it); no error if it is already gone."""
    try:
        home = pwd.getpwnam(system_name).pw_dir
    except KeyError:
        return
    _run(["userdel", system_name])
    if remove_home:
        shutil.rmtree(home, ignore_errors=True)


def delete_group(group: str) -> None:
    try:
        grp.getgrnam(group)
    except KeyError:
        return
    _run(["groupdel", group])


def _run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise AccountError(f"{' '.join(cmd)} failed: {done.stderr.strip() or done.returncode}")


# ------------------------------------------------------------------ the authenticators

class CourseAccounts(LocalAuthenticator):
    """JupyterHub's LocalAuthenticator, with the course's names for the system accounts."""

    user_prefix = Unicode("jupyter-", config=True, help="system user = prefix + hub name")
    user_group = Unicode("jupyterhub-users", config=True, help="the system group of every hub user")
    homes = Unicode(config=True, help="the folder of the students' homes")

    @default("create_system_users")
    def _create_default(self):
        return True

    def validate_username(self, username):
        return (super().validate_username(username) and bool(NAME.match(username))
                and len(self.user_prefix + username) <= MAX_SYSTEM_NAME)

    def system_user_exists(self, user):
        name = self.user_prefix + user.name
        try:
            pwd.getpwnam(name)
        except KeyError:
            return False
        if not is_course_account(name, self.user_group):
            raise AccountError(f"{name!r} is a system account that is not one of the course's")
        return True

    def add_system_user(self, user):
        name = self.user_prefix + user.name
        self.log.info("Creating the system user %s for %s", name, user.name)
        create_account(name, self.user_group, os.path.join(self.homes, user.name))


class CourseSignUpAuthenticator(CourseAccounts, NativeAuthenticator):
    """Sign-up, then the instructor's approval (NativeAuthenticator); the instructor's password
    comes from the hub's private folder, never from a sign-up."""

    admin_password = Unicode(config=True, help="the instructor's password (admin_users)")

    async def authenticate(self, handler, data):
        username = self.normalize_username(data.get("username", ""))
        if username in self.admin_users:
            ok = bool(self.admin_password) and hmac.compare_digest(
                data.get("password", "").encode(), self.admin_password.encode())
            return {"name": username, "admin": True} if ok else None
        return await super().authenticate(handler, data)

    def create_user(self, username, password, **kwargs):
        """A sign-up: refused for the instructor's names; never approved by itself."""
        if self.normalize_username(username) in self.admin_users:
            self.log.warning("Refused a sign-up with the instructor's name %r", username)
            return None
        info = super().create_user(username, password, **kwargs)
        if info is not None and info.is_authorized and not self.open_signup:
            info.is_authorized = False      # NativeAuthenticator approves listed names itself
            self.db.commit()
        return info


class CourseClassPasswordAuthenticator(CourseAccounts, SharedPasswordAuthenticator):
    """The workshop mode: one class password (SharedPasswordAuthenticator), listed users only."""
