"""Debian's nginx in front of app servers, with the repository's own deploy/nginx/nginx.conf, for
tests/e2e/test_proxy.py (what a deployment with several replicas runs, docs/deploy.md).

The conf is copied unchanged into a temporary prefix; only its two includes are written here:
replicas.conf (the upstream servers) and listen.conf (a free loopback port, and the access log
the test reads to see where nginx sent each request).
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.app import ROOT, free_port, stop

NGINX = os.environ.get("NGINX", "/usr/sbin/nginx")
CONF = ROOT / "deploy" / "nginx" / "nginx.conf"
MISSING = f"{NGINX} is missing: `make test` installs Debian's nginx"


@dataclass
class Proxy:
    url: str
    replicas: list[str]              # "127.0.0.1:PORT", as nginx writes $upstream_addr
    access_log: Path

    def entries(self) -> list[dict[str, str]]:
        if not self.access_log.exists():
            return []
        lines = self.access_log.read_text().splitlines()
        return [json.loads(line) for line in lines if line.endswith("}")]

    def wait_for(self, found: Callable[[list[dict[str, str]]], bool], what: str,
                 timeout: float = 60) -> list[dict[str, str]]:
        """The access log once `found` holds (nginx writes a line when a request ends)."""
        deadline = time.monotonic() + timeout
        while True:
            entries = self.entries()
            if found(entries):
                return entries
            if time.monotonic() > deadline:
                raise AssertionError(f"not in nginx's access log after {timeout}s: {what}\n"
                                     + "\n".join(map(str, entries[-20:])))
            time.sleep(0.1)


def _answers(url: str) -> bool:
    with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=30) as response:
        return response.read() == b"ok\n"
    return False


@contextlib.contextmanager
def nginx(prefix: Path, replicas: list[str]) -> Iterator[Proxy]:
    """nginx in front of `replicas` ("127.0.0.1:PORT" each), its files in `prefix`, stopped on
    exit; yields the running proxy once it answers its own health check."""
    if not Path(NGINX).exists():
        raise RuntimeError(MISSING)
    shutil.copy(CONF, prefix / "nginx.conf")
    # max_fails=0: a replica slow to answer on a busy machine is never marked down, which
    # would send its learners to the other one and make the routing the test checks
    # nondeterministic.
    (prefix / "replicas.conf").write_text("".join(f"server {r} max_fails=0;\n" for r in replicas))
    port = free_port()
    access_log = prefix / "access.log"
    (prefix / "listen.conf").write_text(f"listen 127.0.0.1:{port};\naccess_log {access_log} workbench;\n")
    command = [NGINX, "-p", f"{prefix}/", "-c", str(prefix / "nginx.conf"), "-e", "stderr"]
    if os.geteuid() == 0:
        # As root, nginx's workers would run as `nobody`, who cannot enter pytest's private
        # temporary directory to buffer a request body. In compose the image's `nginx` user owns
        # the prefix; here the workers simply stay the caller's own user.
        command += ["-g", "user root;"]
    with open(prefix / "nginx.stderr", "wb") as stderr:
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr,
                                  start_new_session=True)
    proxy = Proxy(f"http://127.0.0.1:{port}", replicas, access_log)
    try:
        deadline = time.monotonic() + 30
        while not _answers(proxy.url + "/nginx-health"):
            if server.poll() is not None:
                raise RuntimeError(f"nginx exited with {server.returncode}: "
                                   + (prefix / "nginx.stderr").read_text())
            if time.monotonic() > deadline:
                raise RuntimeError("nginx did not answer within 30s")
            time.sleep(0.1)
        yield proxy
    finally:
        stop(server)                            # SIGTERM: nginx's fast shutdown
