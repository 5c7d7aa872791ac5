"""/etc/jupyterhub/jupyterhub_config.py on a server where systemd is PID 1 (docs/hub.md).

Started by hub/jupyterhub.service. It loads the course's configuration (everything of
hub/jupyterhub_config.py: sign-up with approval, a system user per student, the read-only
environment, the culler) and changes one thing: each student's server becomes a systemd unit
of its own (SystemdSpawner), with the memory limit enforced by systemd (MemoryMax) instead of the
hub's own cgroups, a CPU limit, a private /tmp, and the whole file system read-only except the
student's home. Not run here: the development machines and CI have no systemd as PID 1
(tests/test_hub_files.py checks every setting below against SystemdSpawner's own traits).
"""
load_subconfig("/opt/attention-course/hub/jupyterhub_config.py")  # noqa: F821 (JupyterHub's loader)

c.JupyterHub.spawner_class = "systemdspawner.SystemdSpawner"   # in requirements-dev.txt (make setup)
c.SystemdSpawner.username_template = "jupyter-{USERNAME}"      # the system users hub/accounts.py makes
c.SystemdSpawner.dynamic_users = False
c.SystemdSpawner.mem_limit = "1.5G"                            # MemoryMax; measured: docs/hub.md
c.SystemdSpawner.cpu_limit = 1.0
c.SystemdSpawner.unit_extra_properties = {"MemoryHigh": "1.2G"}
c.SystemdSpawner.isolate_tmp = True
c.SystemdSpawner.isolate_devices = True
c.SystemdSpawner.disable_user_sudo = True
c.SystemdSpawner.readonly_paths = ["/"]
c.SystemdSpawner.readwrite_paths = ["/var/lib/attnlab-hub/home/{USERNAME}",
                                    "/var/lib/attnlab-hub/exchange"]
c.SystemdSpawner.user_workingdir = "/var/lib/attnlab-hub/home/{USERNAME}"
