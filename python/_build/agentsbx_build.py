# SPDX-License-Identifier: Apache-2.0
"""The package's build backend (PEP 517, PEP 660), in the tree and standard
library only: `pip install ./python` needs nothing from an index, with or
without --no-index and --no-build-isolation, on any Python 3.9+ (a
setuptools backend would make pip fetch setuptools into its isolated build
environment).  It builds a pure-Python wheel of agentsbx/ (py3-none-any)
and an sdist of this directory; the metadata is here, the version is the
package's __version__.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "agentsbx"
PACKAGE = "agentsbx"
SUMMARY = "Run code an AI agent wrote in agentsbx's sandbox (a client of the agentsbx CLI)"
REQUIRES_PYTHON = ">=3.9"
TAG = "py3-none-any"
# Reproducible: every file of a wheel or sdist gets this time (2020-01-01).
EPOCH = (2020, 1, 1, 0, 0, 0)


def _version():
    with open(os.path.join(HERE, PACKAGE, "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"', f.read(), re.M)
    if not m:
        raise RuntimeError("no __version__ in %s/__init__.py" % PACKAGE)
    return m.group(1)


def _dist_info():
    return "%s-%s.dist-info" % (NAME, _version())


def _metadata():
    readme = os.path.join(HERE, "README.md")
    body = ""
    if os.path.exists(readme):
        with open(readme, encoding="utf-8") as f:
            body = f.read()
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
            "License: Apache-2.0\nRequires-Python: %s\n"
            "Description-Content-Type: text/markdown\n\n%s"
            % (NAME, _version(), SUMMARY, REQUIRES_PYTHON, body)).encode()


def _wheel_file():
    return ("Wheel-Version: 1.0\nGenerator: agentsbx_build\nRoot-Is-Purelib: true\n"
            "Tag: %s\n" % TAG).encode()


def _package_files():
    """(archive name, path) of every .py and py.typed of the package."""
    out = []
    for d, dirs, files in os.walk(os.path.join(HERE, PACKAGE)):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py") or f == "py.typed":
                p = os.path.join(d, f)
                out.append((os.path.relpath(p, HERE).replace(os.sep, "/"), p))
    return out


def _write_wheel(wheel_directory, entries):
    """entries: (archive name, bytes); the dist-info and RECORD added."""
    di = _dist_info()
    entries = list(entries) + [(di + "/METADATA", _metadata()), (di + "/WHEEL", _wheel_file()),
                               (di + "/top_level.txt", (PACKAGE + "\n").encode())]
    record = []
    for name, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (name, digest, len(data)))
    record.append(di + "/RECORD,,")
    entries.append((di + "/RECORD", ("\n".join(record) + "\n").encode()))
    filename = "%s-%s-%s.whl" % (NAME, _version(), TAG)
    path = os.path.join(wheel_directory, filename)
    with zipfile.ZipFile(path + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            zi = zipfile.ZipInfo(name, EPOCH)
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    os.replace(path + ".tmp", path)
    return filename


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# ---- PEP 517 ----------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    di = _dist_info()
    os.makedirs(os.path.join(metadata_directory, di), exist_ok=True)
    for name, data in (("METADATA", _metadata()), ("WHEEL", _wheel_file())):
        with open(os.path.join(metadata_directory, di, name), "wb") as f:
            f.write(data)
    return di


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(n, _read(p)) for n, p in _package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660 (`pip install -e ./python`): a .pth naming this directory."""
    return _write_wheel(wheel_directory, [("__editable__.%s.pth" % NAME, (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    files = [("pyproject.toml", os.path.join(HERE, "pyproject.toml")),
             ("_build/agentsbx_build.py", os.path.abspath(__file__))]
    if os.path.exists(os.path.join(HERE, "README.md")):
        files.append(("README.md", os.path.join(HERE, "README.md")))
    files += _package_files()
    filename = base + ".tar.gz"
    path = os.path.join(sdist_directory, filename)
    with tarfile.open(path + ".tmp", "w:gz", format=tarfile.PAX_FORMAT) as t:
        pkg_info = _metadata()
        for name, data in [("PKG-INFO", pkg_info)] + [(n, _read(p)) for n, p in files]:
            ti = tarfile.TarInfo("%s/%s" % (base, name))
            ti.size = len(data)
            ti.mode = 0o644
            ti.mtime = int(time.mktime(EPOCH + (0, 0, -1)))
            t.addfile(ti, io.BytesIO(data))
    os.replace(path + ".tmp", path)
    return filename
