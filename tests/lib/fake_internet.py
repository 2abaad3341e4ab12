# SPDX-License-Identifier: Apache-2.0
"""A fake internet for the egress-by-name tests (issue 27), made of two
network namespaces the test owns and nothing of the host's:

  host-sim  11.98.0.1/24  where the runtime runs (`nsenter --net`), so
                          that its egress proxy's connections (made on
                          the "host" side) stay in the test's namespaces
  internet  11.98.0.2/24  a veth away, holding allowed.test (11.98.0.10),
                          denied.test (11.98.0.11) and metadata.test
                          (169.254.169.254); one server answers HTTP on
                          :80, TLS on :443 (a self-signed certificate;
                          it logs the SNI it was sent), and logs any UDP
                          on :53 and TCP on :22

The names resolve only through the policy's egress.hosts pins the tests
give (HOSTS), nothing on the host.  The server's log (LOG lines such as
"http 11.98.0.10 from 11.98.0.1", "sni allowed.test", "udp53 ...") shows
what reached the internet and from where.
"""

import os
import shutil
import subprocess
import tempfile
import time
import uuid

ALLOWED, DENIED, METADATA = "11.98.0.10", "11.98.0.11", "169.254.169.254"
HOSTS = {"allowed.test": ALLOWED, "denied.test": DENIED, "metadata.test": METADATA}
PROXY_SIDE = "11.98.0.1"

SERVER = r"""
import socket, ssl, sys, threading
log = open(sys.argv[1], "a", buffering=1)
cert, key = sys.argv[2], sys.argv[3]

def http():
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 80)); s.listen(64)
    while True:
        c, peer = s.accept()
        try:
            c.settimeout(5)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = c.recv(4096)
                if not chunk:
                    break
                data += chunk
            here = c.getsockname()[0]
            line = data.split(b"\r\n", 1)[0].decode("latin-1")
            log.write("http %s from %s: %s\n" % (here, peer[0], line))
            path = line.split(" ")[1] if line.count(" ") >= 2 else "/"
            if path.startswith("/files/"):
                f = sys.argv[4] + path[len("/files"):].split("?")[0]
                body = open(f + ("index.html" if f.endswith("/") else ""), "rb").read()
            else:
                body = ("hello from %s\n" % here).encode()
            ctype = b"text/html" if path.endswith("/") else b"application/octet-stream"
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
                      b"Connection: close\r\n\r\n" % (ctype, len(body)) + body)
        except Exception as e:
            log.write("http error %s\n" % e)
        finally:
            c.close()

def tls():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    def sni(sock, name, ctx_):
        log.write("sni %s from %s\n" % (name, sock.getpeername()[0]))
    ctx.sni_callback = sni
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 443)); s.listen(64)
    while True:
        c, peer = s.accept()
        here = c.getsockname()[0]
        try:
            c.settimeout(5)
            t = ctx.wrap_socket(c, server_side=True)
            t.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n")
            t.close()
        except Exception as e:
            # a hand-made hello shares no cipher: the alert is the answer
            log.write("tls %s from %s: %s\n" % (here, peer[0], type(e).__name__))
            try:
                c.close()
            except OSError:
                pass

def udp53():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 53))
    while True:
        data, peer = s.recvfrom(2048)
        log.write("udp53 from %s\n" % peer[0])

def tcp22():
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 22)); s.listen(8)
    while True:
        c, peer = s.accept()
        log.write("tcp22 from %s\n" % peer[0])
        c.close()

for f in (http, tls, udp53, tcp22):
    threading.Thread(target=f, daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
"""


def _ip(*args):
    subprocess.run(["ip"] + list(args), check=True, capture_output=True, timeout=10)


class FakeInternet:
    def __init__(self, files_dir=None):
        tag = uuid.uuid4().hex[:6]
        self.host_ns, self.inet_ns = "asbx-hs-" + tag, "asbx-in-" + tag
        self.tmp = tempfile.mkdtemp(prefix="agentsbx-inet-")
        self.log = os.path.join(self.tmp, "server.log")
        self.files = files_dir or os.path.join(self.tmp, "files")
        os.makedirs(self.files, exist_ok=True)
        self.server = None
        vh, vi = "vh" + tag, "vi" + tag
        try:
            _ip("netns", "add", self.host_ns)
            _ip("netns", "add", self.inet_ns)
            _ip("link", "add", vh, "netns", self.host_ns, "type", "veth", "peer", "name", vi,
                "netns", self.inet_ns)
            _ip("-n", self.host_ns, "addr", "add", PROXY_SIDE + "/24", "dev", vh)
            _ip("-n", self.host_ns, "link", "set", vh, "up")
            _ip("-n", self.host_ns, "link", "set", "lo", "up")
            _ip("-n", self.host_ns, "route", "add", METADATA + "/32", "dev", vh)
            _ip("-n", self.inet_ns, "addr", "add", "11.98.0.2/24", "dev", vi)
            for a in (ALLOWED, DENIED, METADATA):
                _ip("-n", self.inet_ns, "addr", "add", a + "/32", "dev", vi)
            _ip("-n", self.inet_ns, "link", "set", vi, "up")
            _ip("-n", self.inet_ns, "link", "set", "lo", "up")
            self.cert, self.key = os.path.join(self.tmp, "cert.pem"), os.path.join(self.tmp, "key.pem")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                            "-subj", "/CN=allowed.test", "-addext", "subjectAltName=DNS:allowed.test",
                            "-keyout", self.key, "-out", self.cert], check=True,
                           capture_output=True, timeout=60)
            self.server = subprocess.Popen(["ip", "netns", "exec", self.inet_ns, "/usr/bin/python3",
                                            "-c", SERVER, self.log, self.cert, self.key, self.files],
                                           stdout=subprocess.PIPE, text=True)
            assert self.server.stdout.readline().strip() == "ready"
        except BaseException:
            self.close()
            raise

    def argv(self, argv):
        """argv run with the host-sim namespace as its network."""
        return ["nsenter", "--net=/run/netns/" + self.host_ns] + list(argv)

    def lines(self):
        time.sleep(0.2)  # the server's threads write as they go
        try:
            with open(self.log) as f:
                return f.read().splitlines()
        except OSError:
            return []

    def close(self):
        if self.server:
            self.server.kill()
            self.server.wait()
            self.server = None
        for ns in (self.host_ns, self.inet_ns):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10)
        shutil.rmtree(self.tmp, ignore_errors=True)


def egress_policy(allow, audit_log, **more):
    pol = {"egress": {"allowDomains": list(allow), "hosts": dict(HOSTS)}, "auditLog": audit_log}
    pol.update(more)
    return pol


def wheel_index(files_dir, name="agentsbx_probe", version="1.0", value="42"):
    """A PEP 503 index under files_dir/simple/ with one pure-Python wheel
    built here (a wheel is a zip: the module, METADATA, WHEEL, RECORD)."""
    import base64
    import hashlib
    import zipfile

    dist = "%s-%s" % (name, version)
    whl = "%s-py3-none-any.whl" % dist
    project = name.replace("_", "-")
    members = {
        "%s/__init__.py" % name: "VALUE = %s\n" % value,
        "%s.dist-info/METADATA" % dist: "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (project, version),
        "%s.dist-info/WHEEL" % dist: "Wheel-Version: 1.0\nGenerator: agentsbx-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append("%s,sha256=%s,%d" % (path, digest.decode(), len(text)))
    record.append("%s.dist-info/RECORD,," % dist)
    members["%s.dist-info/RECORD" % dist] = "\n".join(record) + "\n"
    pdir = os.path.join(files_dir, "simple", project)
    os.makedirs(pdir, exist_ok=True)
    with zipfile.ZipFile(os.path.join(pdir, whl), "w") as z:
        for path, text in members.items():
            z.writestr(path, text)
    with open(os.path.join(pdir, "index.html"), "w") as f:
        f.write('<html><body><a href="%s">%s</a></body></html>\n' % (whl, whl))
    with open(os.path.join(files_dir, "simple", "index.html"), "w") as f:
        f.write('<html><body><a href="%s/">%s</a></body></html>\n' % (project, project))
    return project
