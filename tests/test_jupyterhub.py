"""A class on a real local JupyterHub, as docs/jupyterhub.md sets one up, driven through REST only.

The test is root: it creates three Unix users (an instructor and two learners, ``ana`` and ``ben``,
with a random prefix), starts JupyterHub (LocalProcessSpawner, PAMAuthenticator, the pure-Python
configurable-http-proxy from PyPI) on free local ports, and then runs a class's whole cycle through
HTTP calls:

- the hub's REST API (a service token with admin scopes): create the users, give each a token,
  start their servers;
- the instructor's formgrader API (``/user/<instructor>/formgrader/api/...``): generate and release
  the assignment, collect, autograde each learner, generate and release feedback;
- each learner's nbgrader handlers (``/user/<learner>/assignments/fetch|submit|fetch_feedback``) and
  Jupyter's contents API (to answer the notebook as the learner would in JupyterLab).

Ana submits a correct notebook and Ben one with a wrong ``add``. The gradebook must hold 5/5 for
Ana and 3/5 for Ben, each learner's home must hold their own feedback only, and, run as Ben, the
file system must refuse him Ana's home, the exchange's inbound and feedback folders, the course
folder, its ``.aag/secret`` and its gradebook (while it lets him read what was released).

The chapter is the pure-Python fixture chapter (tests/fixtures/ch00_fixture), so grading is quick.
Every server runs this test's own course environment (``sys.executable``), as a class's servers run
the one in /opt. Where other users cannot reach it (CI may clone into root's home, and the venv's
base Python may live there too), the hub starts in a mount namespace of its own: the private folder
above (e.g. /root) is covered by an empty tmpfs and only the environment's folders are bind-mounted
back, read-only (no copy, no cost; needs ``unshare --mount``). A system Python with a ``.pth`` onto
the venv's packages does not do: packages resolved for the venv's Python may refuse an older patch
release (soupsieve 4.1 needs 3.11.5, Debian 12 has 3.11.2, and nbconvert's feedback needs it).

Whether it runs is decided by ``AAG_HUB_TEST``: ``require`` (CI: ``.ci/run`` sets it; also the
default when ``CI`` is set) makes anything missing a failure; ``auto`` (the default) skips, saying
what is missing (it needs root, useradd, setpriv, unshare where the environment is private, and
the hub extra's jupyterhub and configurable-http-proxy); ``off`` skips.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from html import unescape
from pathlib import Path

import nbformat
import pytest

import nbgrader_helpers as h
from autograder.tools.course import others_can_reach

pytestmark = pytest.mark.slow

MODE_ENV = "AAG_HUB_TEST"
CHAPTER = h.FIXTURE_CHAPTER
COURSE_ID = "all-about-gpus-test"
# Marks the Unix users this test creates (their GECOS field), with the pid of the pytest process
# that made them: users left by a run that was killed are removed by the next run.
USER_MARK = "aag hub test, pid "
SERVICE = "class-test"
# nbgrader's JupyterLab plugins that only the instructor sees
INSTRUCTOR_PLUGINS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment")


# --- when the test runs ---------------------------------------------------------------------------

def mode(env=os.environ) -> str:
    return h.run_mode(MODE_ENV, env)


def find_proxy() -> str | None:
    """configurable-http-proxy: the course environment's (pip's pure-Python one), else PATH's."""
    here = Path(sys.executable).parent / "configurable-http-proxy"
    return str(here) if os.access(here, os.X_OK) else shutil.which("configurable-http-proxy")


def course_paths() -> list[Path]:
    """What a user's server runs: the course environment's interpreter (its base installation),
    the environment itself, and the course package (an editable install points into the clone)."""
    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(),
             (Path(h.REPO) / "autograder").resolve()}
    return sorted(paths)


def private_tops(paths) -> dict[Path, list[Path]]:
    """For each path others cannot reach, the topmost folder above it that others cannot search
    (e.g. /root): top -> the paths under it."""
    tops: dict[Path, list[Path]] = {}
    for path in paths:
        if others_can_reach(path):
            continue
        top = next((p for p in reversed([path, *path.parents])
                    if not os.stat(p).st_mode & 0o001), path)
        tops.setdefault(top, []).append(path)
    return tops


def can_make_a_view() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "true"],
                          capture_output=True).returncode == 0


def unavailable_reason() -> str | None:
    """Why the hub test cannot run here, or None when it can."""
    if mode() == "off":
        return f"{MODE_ENV}=off"
    missing = []
    if os.name != "posix" or os.geteuid() != 0:
        missing.append("root (it creates Unix users and runs JupyterHub's LocalProcessSpawner)")
    for tool, package in (("useradd", "passwd"), ("userdel", "passwd"), ("setpriv", "util-linux")):
        if shutil.which(tool) is None:
            missing.append(f"`{tool}` (Debian package {package})")
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        missing.append("jupyterhub (the hub extra: `AAG_EXTRAS=hub ./aag test`, as CI runs)")
    if find_proxy() is None:
        missing.append("configurable-http-proxy (`pip install configurable-http-proxy`, in the hub "
                       "extra)")
    if os.name == "posix" and os.geteuid() == 0 and private_tops(course_paths()) \
            and not can_make_a_view():
        missing.append("`unshare --mount` (util-linux, and the right to mount), to show the "
                       "course's private environment to the test's users")
    if not missing:
        return None
    return "the JupyterHub test needs " + " and ".join(missing)


def test_mode_is_require_in_ci_and_auto_elsewhere():
    assert mode({}) == "auto"
    assert mode({"CI": "true"}) == "require"
    assert mode({"CI": "true", MODE_ENV: "off"}) == "off"
    assert mode({MODE_ENV: "Require"}) == "require"
    with pytest.raises(ValueError, match=MODE_ENV):
        mode({MODE_ENV: "yes"})


def test_others_can_reach(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "file").write_text("x")
    for p in (tmp_path, shared):
        p.chmod(0o755)
    (shared / "file").chmod(0o644)
    tmp_path_parents_open = all(os.stat(p).st_mode & 0o001 for p in tmp_path.parents)
    assert others_can_reach(shared / "file") == tmp_path_parents_open
    shared.chmod(0o700)
    assert not others_can_reach(shared / "file")
    assert not others_can_reach(tmp_path / "missing")


# --- Unix users ------------------------------------------------------------------------------------

def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_processes_of(uid: int) -> None:
    """SIGKILL every process running as ``uid`` (a throwaway user of this test), by pid."""
    import psutil

    for proc in psutil.process_iter(["uids"]):
        try:
            if proc.info["uids"] and proc.info["uids"].real == uid:
                proc.kill()
        except psutil.Error:
            pass


def _remove_user(name: str) -> None:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return
    for _ in range(3):
        _kill_processes_of(entry.pw_uid)
        if subprocess.run(["userdel", name], capture_output=True).returncode in (0, 6):
            break
        time.sleep(0.5)


def _remove_users_left_by_dead_runs() -> None:
    for entry in pwd.getpwall():
        if entry.pw_gecos.startswith(USER_MARK):
            pid = entry.pw_gecos[len(USER_MARK):]
            if pid.isdigit() and not _pid_alive(int(pid)):
                _remove_user(entry.pw_name)
                top = Path(entry.pw_dir).parent.parent
                if top.name.startswith("aag-hub-") and top.parent == Path(tempfile.gettempdir()):
                    shutil.rmtree(top, ignore_errors=True)


def _add_user(name: str, home: Path) -> pwd.struct_passwd:
    subprocess.run(["useradd", "--no-create-home", "--home-dir", str(home), "--shell",
                    "/usr/sbin/nologin", "--user-group", "--comment", f"{USER_MARK}{os.getpid()}",
                    name], check=True, capture_output=True)
    entry = pwd.getpwnam(name)
    home.mkdir(mode=0o700)
    os.chown(home, entry.pw_uid, entry.pw_gid)
    return entry


def as_user(entry: pwd.struct_passwd, *argv: str, timeout: float = 30) -> subprocess.CompletedProcess:
    """Run ``argv`` as that user (their uid, gid and groups)."""
    cmd = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups",
           "--", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd="/",
                          env={"PATH": "/usr/bin:/bin", "HOME": entry.pw_dir, "LANG": "C"})


def _chown_tree(top: Path, entry: pwd.struct_passwd) -> None:
    for dirpath, dirnames, filenames in os.walk(top):
        for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
            os.lchown(name, entry.pw_uid, entry.pw_gid)


# --- what the users' servers run ----------------------------------------------------------------

def view_script(tops: dict[Path, list[Path]], stage: Path) -> str:
    """Shell lines, run in a mount namespace of the hub's own, that show each private path to
    every user and nothing else of the private folder above it: the folder is covered by an empty
    tmpfs, and each path is bind-mounted back, read-only, from a view of the original."""
    lines = ["set -e"]
    for i, (top, paths) in enumerate(sorted(tops.items())):
        original = stage / str(i)
        lines += [f"mkdir -p {shlex.quote(str(original))}",
                  f"mount --bind {shlex.quote(str(top))} {shlex.quote(str(original))}",
                  f"mount -t tmpfs -o mode=755 aag-hub-view {shlex.quote(str(top))}"]
        for path in paths:
            source = original / path.relative_to(top)
            lines += [f"mkdir -p {shlex.quote(str(path))}",
                      f"mount --rbind {shlex.quote(str(source))} {shlex.quote(str(path))}",
                      f"mount -o remount,bind,ro {shlex.quote(str(path))}"]
        lines.append(f"umount -l {shlex.quote(str(original))}")
    return "\n".join(lines + ['exec "$@"'])


def write_class_config(top: Path, exchange: Path) -> None:
    """What docs/jupyterhub.md puts in /etc/all-about-gpus (here in a temporary folder, so the
    machine's /etc is left alone): ``jupyter/``, everyone's (the course and its exchange), and
    ``learners/``, the learners' only (nbgrader's server extensions and JupyterLab plugins without
    formgrader and create-assignment). The hub names them in each server's JUPYTER_CONFIG_PATH."""
    everyone, learners = top / "jupyter", top / "learners"
    everyone.mkdir(parents=True)
    (everyone / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n")
    (learners / "jupyter_server_config.d").mkdir(parents=True)
    (learners / "jupyter_server_config.d" / "nbgrader.json").write_text(json.dumps({
        "ServerApp": {"jpserver_extensions": {
            "nbgrader.server_extensions.assignment_list": True,
            "nbgrader.server_extensions.course_list": True,
            "nbgrader.server_extensions.validate_assignment": True,
            "nbgrader.server_extensions.formgrader": False,
        }}}, indent=1))
    (learners / "labconfig").mkdir()
    (learners / "labconfig" / "page_config.json").write_text(json.dumps({"disabledExtensions": {
        plugin: True for plugin in INSTRUCTOR_PLUGINS}}, indent=1))


def config_path_code(top: Path, instructors) -> str:
    """Hub configuration lines: each server's JUPYTER_CONFIG_PATH, by who its user is."""
    return (f"INSTRUCTORS = {set(instructors)!r}\n"
            "def config_path(spawner):\n"
            f"    if spawner.user.name in INSTRUCTORS:\n"
            f"        return {str(top / 'jupyter')!r}\n"
            f"    return {str(top / 'learners') + os.pathsep + str(top / 'jupyter')!r}\n"
            "c.Spawner.environment['JUPYTER_CONFIG_PATH'] = config_path\n")


def write_instructor_config(home: Path, course: Path) -> None:
    """The instructor's own Jupyter config: nbgrader reads the course's nbgrader_config.py (the
    course root is the folder holding it)."""
    jupyter = home / ".jupyter"
    jupyter.mkdir(mode=0o700)
    (jupyter / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"load_subconfig({str(course / 'nbgrader_config.py')!r})\n")


# --- the hub ---------------------------------------------------------------------------------------

def free_ports(n: int) -> list[int]:
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class Hub:
    """JupyterHub as root on free local ports, its state in ``state``, logging to a file."""

    def __init__(self, state: Path, environment: dict, view: str | None = None, more: str = ""):
        self.state, self.view = state, view
        self.port, self.hub_port, self.api_port = free_ports(3)
        self.token = secrets.token_hex(32)
        self.proc: subprocess.Popen | None = None
        self.log_path = state / "jupyterhub.log"
        config = {
            "JupyterHub.ip": "127.0.0.1",
            "JupyterHub.port": self.port,
            "JupyterHub.hub_ip": "127.0.0.1",
            "JupyterHub.hub_port": self.hub_port,
            "JupyterHub.db_url": f"sqlite:///{state / 'jupyterhub.sqlite'}",
            "JupyterHub.cookie_secret_file": str(state / "jupyterhub_cookie_secret"),
            "JupyterHub.authenticator_class": "pam",
            "JupyterHub.spawner_class": "localprocess",
            # a POST that starts a server answers at once (202); the test polls for readiness
            "JupyterHub.tornado_settings": {"slow_spawn_timeout": 0},
            "JupyterHub.services": [{"name": SERVICE, "api_token": self.token}],
            "JupyterHub.load_roles": [{"name": SERVICE, "services": [SERVICE],
                                       "scopes": ["admin:users", "admin:servers", "tokens",
                                                  "list:users"]}],
            "ConfigurableHTTPProxy.command": [find_proxy()],
            "ConfigurableHTTPProxy.api_url": f"http://127.0.0.1:{self.api_port}",
            "ConfigurableHTTPProxy.pid_file": str(state / "proxy.pid"),
            "Spawner.cmd": [sys.executable, "-m", "jupyterhub.singleuser"],
            "Spawner.environment": environment,
            "Spawner.http_timeout": 120,
            "Spawner.start_timeout": 120,
        }
        text = "c = get_config()\n" + "".join(
            f"c.{key} = {value!r}\n" for key, value in config.items()) + more
        self.config_path = state / "jupyterhub_config.py"
        self.config_path.write_text(text)
        self.config_path.chmod(0o600)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90) -> float:
        t0 = time.monotonic()
        env = dict(os.environ, CONFIGPROXY_AUTH_TOKEN=secrets.token_hex(32))
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        cmd = [sys.executable, "-m", "jupyterhub", "-f", str(self.config_path)]
        if self.view:
            # the hub, and so every server it spawns, in a mount namespace of its own
            cmd = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", self.view,
                   "sh", *cmd]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                cmd, cwd=self.state,
                env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"jupyterhub exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if self.request("GET", "/hub/api/", self.token, timeout=5)[0] == 200:
                    return time.monotonic() - t0
            except (urllib.error.URLError, ConnectionError, OSError):
                pass         # the proxy answers 404 until the hub has added its own route
            if time.monotonic() - t0 > timeout:
                raise AssertionError(f"jupyterhub did not answer within {timeout} s:\n{self.log_tail()}")
            time.sleep(0.25)

    def request(self, method: str, path: str, token: str, body=None, timeout: float = 60,
                form: dict | None = None):
        """An HTTP call through the proxy; returns (status, decoded JSON or text)."""
        data, headers = None, {"Authorization": f"token {token}"}
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        text = raw.decode(errors="replace")
        try:
            return status, json.loads(text) if text else None
        except json.JSONDecodeError:
            return status, text

    def api(self, method: str, path: str, body=None, expect=(200, 201, 202, 204)):
        """The hub's REST API with the test service's admin token."""
        status, value = self.request(method, "/hub/api" + path, self.token, body)
        if status not in expect:
            raise AssertionError(f"{method} /hub/api{path}: {status} {value}\n{self.log_tail()}")
        return value

    def log_tail(self, lines: int = 60) -> str:
        return h.log_tail(self.log_path, lines)

    def stop(self) -> None:
        """Stop the hub (it stops the servers it spawned and its proxy), then make sure."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)     # anything left in its session
            except ProcessLookupError:
                pass
        pid_file = self.state / "proxy.pid"
        if pid_file.exists():
            import psutil
            try:
                pid = int(pid_file.read_text().strip())
                if "configurable-http-proxy" in " ".join(psutil.Process(pid).cmdline()):
                    os.kill(pid, signal.SIGKILL)
            except (ValueError, OSError, psutil.Error):
                pass


class Server:
    """One user's single-user server, reached through the proxy with that user's own token."""

    def __init__(self, hub: Hub, name: str, token: str):
        self.hub, self.name, self.token = hub, name, token

    def call(self, method: str, path: str, body=None, form=None, timeout: float = 300):
        status, value = self.hub.request(method, f"/user/{self.name}{path}", self.token, body,
                                         timeout=timeout, form=form)
        if status >= 400:
            raise AssertionError(f"{self.name}: {method} {path}: {status} {str(value)[:3000]}")
        return value

    # nbgrader's assignment_list handlers, as JupyterLab's Assignments tab calls them
    def assignments(self) -> dict:
        listed = self.call("GET", f"/assignments?course_id={COURSE_ID}")
        assert listed["success"], listed
        return {(a["assignment_id"], a["status"]): a for a in listed["value"]}

    def action(self, action: str, assignment: str) -> dict:
        done = self.call("POST", f"/assignments/{action}",
                         form={"course_id": COURSE_ID, "assignment_id": assignment})
        assert done.get("success"), f"{self.name}: {action}: {done}"
        return {(a["assignment_id"], a["status"]): a for a in done["value"]}

    # formgrader's API (the instructor's server only)
    def formgrader(self, method: str, path: str):
        done = self.call(method, f"/formgrader/api/{path}", body={} if method == "POST" else None)
        if isinstance(done, dict) and "success" in done:
            assert done["success"], f"formgrader {path}: {done.get('error')}\n{done.get('log')}"
        return done


# --- the class -------------------------------------------------------------------------------------

@pytest.fixture
def hub_class(tmp_path, record_property):
    """Three Unix users, the course in the instructor's home, an exchange, a learners' environment
    and a running hub; everything removed afterwards, whatever happened."""
    reason = unavailable_reason()
    if reason:
        if mode() == "require":
            pytest.fail(f"{reason} ({MODE_ENV}=require)")
        pytest.skip(reason)
    _remove_users_left_by_dead_runs()

    shared = Path(tempfile.mkdtemp(prefix="aag-hub-"))
    prefix = "aag" + secrets.token_hex(2)
    names = {"instructor": f"{prefix}-teacher", "ana": f"{prefix}-ana", "ben": f"{prefix}-ben"}
    hub = None
    timings = {}
    try:
        t0 = time.monotonic()
        shared.chmod(0o755)
        (shared / "home").mkdir(mode=0o755)
        # As docs/jupyterhub.md makes /srv/nbgrader/exchange: everyone may write, nobody may
        # remove or rename what someone else put there (the sticky bit).
        exchange = shared / "exchange"
        exchange.mkdir()
        exchange.chmod(0o1777)
        state = shared / "hub"
        state.mkdir(mode=0o700)

        users = {role: _add_user(name, shared / "home" / name) for role, name in names.items()}
        instructor = users["instructor"]
        course = Path(instructor.pw_dir) / "course"
        h.make_course(course, [CHAPTER])
        h.aag_build.convert_chapter(course, CHAPTER)       # what `aag build` does first
        write_instructor_config(Path(instructor.pw_dir), course)
        _chown_tree(Path(instructor.pw_dir), instructor)

        write_class_config(shared / "etc", exchange)
        tops = private_tops(course_paths())
        view = view_script(tops, state / "view") if tops else None
        how = ("the course environment through a mount namespace: "
               + "; ".join(f"{top} covered, {', '.join(map(str, paths))} shown read-only"
                           for top, paths in tops.items())) if tops else \
            "the course environment as it is (every user can reach it)"
        record_property("course_env", how)
        timings["setup"] = time.monotonic() - t0

        environment = {
            "AAG_SANDBOX": h.sandbox_mode(),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin",
                                     "/usr/bin", "/bin"]),
        }
        hub = Hub(state, environment, view, config_path_code(shared / "etc", [names["instructor"]]))
        timings["hub start"] = hub.start()
        yield {"hub": hub, "users": users, "names": names, "course": course,
               "exchange": exchange, "shared": shared, "timings": timings, "env_how": how}
    finally:
        if hub is not None:
            if os.environ.get("AAG_HUB_TEST_LOG"):
                shutil.copy2(hub.log_path, os.environ["AAG_HUB_TEST_LOG"])
            hub.stop()
        for name in names.values():
            _remove_user(name)
        shutil.rmtree(shared, ignore_errors=True)
        for key, seconds in timings.items():
            record_property(f"seconds {key}", f"{seconds:.1f}")
    

def _start_servers(hub: Hub, names: dict) -> dict[str, Server]:
    """Through the hub's REST API: create the users, a token for each, start their servers."""
    hub.api("POST", "/users", {"usernames": list(names.values())})
    servers = {}
    for role, name in names.items():
        token = hub.api("POST", f"/users/{name}/tokens",
                        {"note": "hub test", "expires_in": 3600,
                         "scopes": [f"access:servers!user={name}"]})["token"]
        hub.api("POST", f"/users/{name}/server", expect=(201, 202))
        servers[role] = Server(hub, name, token)
    deadline = time.monotonic() + 150
    waiting = set(names.values())
    while waiting:
        for name in sorted(waiting):
            model = hub.api("GET", f"/users/{name}")
            server = model.get("servers", {}).get("")
            if server and server.get("ready"):
                waiting.discard(name)
            elif not server or not server.get("pending"):
                raise AssertionError(f"{name}'s server is neither ready nor starting: {model}\n"
                                     f"{hub.log_tail()}")
        if waiting and time.monotonic() > deadline:
            raise AssertionError(f"servers not ready: {sorted(waiting)}\n{hub.log_tail()}")
        time.sleep(0.3)
    return servers


def _answer(server: Server, wrong_add: bool) -> None:
    """Write the answers into the fetched notebook through Jupyter's contents API, as saving
    the notebook in JupyterLab does."""
    path = f"/api/contents/{CHAPTER}/{CHAPTER}.ipynb"
    model = server.call("GET", f"{path}?content=1")
    nb = nbformat.from_dict(model["content"])
    blank = "    # YOUR CODE HERE\n    raise NotImplementedError()"
    nb = h.mutate(nb, "add", blank, "    return a - b" if wrong_add else "    return a + b")
    nb = h.mutate(nb, "scale", blank, "    return [x * k for x in xs]")
    server.call("PUT", path, body={"type": "notebook", "format": "json", "content": nb})


def _feedback_text(home: Path) -> tuple[list[Path], str]:
    files = sorted((home / CHAPTER / "feedback").glob(f"*/{CHAPTER}.html"))
    text = unescape(re.sub(r"<[^>]+>", "", files[0].read_text())) if files else ""
    return files, text


def lab_disables(server: Server, plugins) -> bool:
    """Whether the JupyterLab page this user gets turns all of ``plugins`` off (True), or none."""
    page = server.call("GET", "/lab")
    data = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                     page, re.S)
    assert data, page[:2000]
    disabled = set(json.loads(data.group(1)).get("disabledExtensions", []))
    hits = [plugin in disabled for plugin in plugins]
    assert all(hits) or not any(hits), (server.name, sorted(disabled))
    return all(hits)


def _denied(result: subprocess.CompletedProcess) -> bool:
    return result.returncode != 0 and "Permission denied" in result.stderr


def test_a_class_on_jupyterhub(hub_class, record_property):
    """Release, fetch, submit, collect, autograde, feedback: all through the hub's REST API,
    the learners' nbgrader handlers and formgrader's API; then who can read what."""
    hub, users, names = hub_class["hub"], hub_class["users"], hub_class["names"]
    course, exchange, timings = hub_class["course"], hub_class["exchange"], hub_class["timings"]
    print("users' servers run", hub_class["env_how"])

    t0 = time.monotonic()
    servers = _start_servers(hub, names)
    teacher, ana, ben = servers["instructor"], servers["ana"], servers["ben"]
    timings["three servers"] = time.monotonic() - t0

    # JupyterLab: the formgrader and create-assignment plugins for the instructor only.
    # Formgrader's API answers in the instructor's server only.
    for server, disabled in ((teacher, False), (ana, True), (ben, True)):
        assert lab_disables(server, INSTRUCTOR_PLUGINS) is disabled, server.name
        status, _ = hub.request("GET", f"/user/{server.name}/formgrader/api/status", server.token)
        assert status == (404 if disabled else 200), (server.name, status)

    # The instructor: generate the assignment into the gradebook, release it to the exchange.
    t0 = time.monotonic()
    assert teacher.formgrader("GET", "status")["status"] is True
    teacher.formgrader("POST", f"assignment/{CHAPTER}/assign")
    teacher.formgrader("POST", f"assignment/{CHAPTER}/release")
    assert teacher.formgrader("GET", f"assignment/{CHAPTER}")["releaseable"] is True
    assert (exchange / COURSE_ID / "outbound" / CHAPTER / f"{CHAPTER}.ipynb").is_file()
    timings["release"] = time.monotonic() - t0

    # The learners: fetch, answer (Ana right, Ben with a wrong add), submit.
    t0 = time.monotonic()
    for role, server in (("ana", ana), ("ben", ben)):
        assert (CHAPTER, "released") in server.assignments()
        assert (CHAPTER, "fetched") in server.action("fetch", CHAPTER)
        fetched = Path(users[role].pw_dir) / CHAPTER / f"{CHAPTER}.ipynb"
        assert fetched.is_file() and fetched.stat().st_uid == users[role].pw_uid
        _answer(server, wrong_add=(role == "ben"))
        assert (CHAPTER, "submitted") in server.action("submit", CHAPTER)
    timings["fetch and submit"] = time.monotonic() - t0

    # The instructor: collect, autograde each learner, generate and release feedback.
    t0 = time.monotonic()
    teacher.formgrader("POST", f"assignment/{CHAPTER}/collect")
    for role in ("ana", "ben"):
        assert (course / "submitted" / names[role] / CHAPTER / f"{CHAPTER}.ipynb").is_file()
    for role in ("ana", "ben"):
        teacher.formgrader("POST", f"submission/{CHAPTER}/{names[role]}/autograde")
    timings["collect and autograde"] = time.monotonic() - t0
    t0 = time.monotonic()
    teacher.formgrader("POST", f"assignment/{CHAPTER}/generate_feedback")
    teacher.formgrader("POST", f"assignment/{CHAPTER}/release_feedback")

    # The gradebook, through formgrader and read directly.
    submissions = {s["student"]: s for s in teacher.formgrader("GET", f"submissions/{CHAPTER}")}
    assert (submissions[names["ana"]]["score"], submissions[names["ana"]]["max_score"]) == (5, 5)
    assert (submissions[names["ben"]]["score"], submissions[names["ben"]]["max_score"]) == (3, 5)
    assert h.grades(course, CHAPTER, names["ana"]) == {"add_test": (2, 2), "scale_test": (3, 3)}
    assert h.grades(course, CHAPTER, names["ben"]) == {"add_test": (0, 2), "scale_test": (3, 3)}

    # The learners fetch their feedback: each home holds one, their own.
    for role, server, score in (("ana", ana, 5), ("ben", ben, 3)):
        assert (CHAPTER, "submitted") in server.action("fetch_feedback", CHAPTER)
        files, text = _feedback_text(Path(users[role].pw_dir))
        assert len(files) == 1, files
        assert files[0].stat().st_uid == users[role].pw_uid
        assert re.search(rf"Score:\s*{score}(\.0)?\s*/\s*5", text), text[:2000]
        other = names["ben" if role == "ana" else "ana"]
        assert other not in text and "add(-5, 5)" not in text       # nor hidden tests' code
    timings["feedback"] = time.monotonic() - t0

    # Who can read what, as Ben: the release yes; Ana's home, the exchange's inbound and
    # feedback, the course folder, its secret and gradebook no.
    ben_user, ana_home = users["ben"], Path(users["ana"].pw_dir)
    secret = course / ".aag" / "secret"
    assert secret.is_file() and (course / "gradebook.db").is_file()
    released = exchange / COURSE_ID / "outbound" / CHAPTER / f"{CHAPTER}.ipynb"
    assert as_user(ben_user, "cat", str(released)).returncode == 0      # the check can pass
    assert as_user(ben_user, "ls", str(Path(ben_user.pw_dir) / CHAPTER)).returncode == 0
    for argv in (["ls", str(ana_home)],
                 ["cat", str(ana_home / CHAPTER / f"{CHAPTER}.ipynb")],
                 ["ls", str(exchange / COURSE_ID / "inbound")],
                 ["ls", str(exchange / COURSE_ID / "feedback")],
                 ["ls", str(course)],
                 ["cat", str(secret)],
                 ["cat", str(course / "gradebook.db")],
                 ["ls", str(course / "submitted" / names["ana"])]):
        result = as_user(ben_user, *argv)
        assert _denied(result), f"{names['ben']} could run {argv}: {result.stdout[:500]}"
    # Nor may he remove or replace the course's folder in the exchange (sticky bit).
    result = as_user(ben_user, "mv", str(exchange / COURSE_ID), str(exchange / "taken"))
    assert result.returncode != 0 and (exchange / COURSE_ID).is_dir(), result
    # The secret and the gradebook are the instructor's alone, even for the instructor's group.
    assert secret.stat().st_mode & 0o077 == 0
    assert Path(users["instructor"].pw_dir).stat().st_mode & 0o077 == 0

    # Stopping a server through the hub's REST API.
    hub.api("DELETE", f"/users/{names['ben']}/server", expect=(202, 204))
    print("hub test timings:", ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
