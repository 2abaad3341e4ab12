# SPDX-License-Identifier: Apache-2.0
"""agentsbx.Session, shaped as E2B's code interpreter: run_code, files,
commands; timeouts, cancellation, errors; 20 sessions leave nothing."""

import os
import random
import signal
import statistics
import struct
import threading
import time
import zlib

import pytest

import agentsbx
import py_helpers as H


def make_csv(n=120, seed=31):
    rnd = random.Random(seed)
    rows = [(rnd.choice(["oslo", "lima", "pune", "baku"]), round(rnd.uniform(-10, 35), 1))
            for _ in range(n)]
    return "city,temp\n" + "".join("%s,%s\n" % r for r in rows), rows


ANALYSE = """
import csv, statistics
from collections import defaultdict
by_city = defaultdict(list)
with open("weather.csv", newline="") as f:
    for row in csv.DictReader(f):
        by_city[row["city"]].append(float(row["temp"]))
summary = {c: (len(v), round(statistics.mean(v), 3), max(v)) for c, v in sorted(by_city.items())}
with open("summary.csv", "w") as f:
    f.write("city,n,mean,max\\n")
    for c, (n, m, x) in summary.items():
        f.write("%s,%d,%s,%s\\n" % (c, n, m, x))
print("cities:", len(summary))
summary
"""


def test_csv_written_and_analysed_in_pure_python(make_session):
    s = make_session()
    text, rows = make_csv()
    info = s.files.write("weather.csv", text)
    assert (info.path, info.size, info.type) == ("/workspace/weather.csv", len(text), "file")
    r = s.run_code(ANALYSE)
    assert r.exit_code == 0 and r.logs.stdout == ["cities: 4\n"], r
    want = {}
    for c, t in rows:
        want.setdefault(c, []).append(t)
    want = {c: (len(v), round(statistics.mean(v), 3), max(v)) for c, v in sorted(want.items())}
    assert r.text == repr(want)
    back = s.files.read("/workspace/summary.csv").splitlines()
    assert back[0] == "city,n,mean,max" and len(back) == 5
    names = {e.name: (e.type, e.path) for e in s.files.list()}
    assert names == {"weather.csv": ("file", "/workspace/weather.csv"),
                     "summary.csv": ("file", "/workspace/summary.csv")}
    assert s.files.exists("summary.csv") and not s.files.exists("nope.csv")
    # Files persist between runs; a program's variables do not (each run
    # is a new container, not a kernel).
    r = s.run_code("summary")
    assert r.error.name == "NameError"


# A PNG writer in pure Python: a bar chart of the CSV's means.
CHART = r"""
import csv, struct, zlib
means = [float(r["mean"]) for r in csv.DictReader(open("summary.csv"))]
W, H, BAR = 10 * len(means), 40, 8
def chunk(tag, data):
    return (struct.pack(">I", len(data)) + tag + data +
            struct.pack(">I", zlib.crc32(tag + data) & 0xffffffff))
heights = [max(1, min(H, int(m) + 10)) for m in means]
raw = b""
for y in range(H):
    row = b"\0"
    for x in range(W):
        i, off = divmod(x, 10)
        on = off < BAR and H - y <= heights[i]
        row += bytes((200, 30, 30) if on else (255, 255, 255))
    raw += row
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 2, 0, 0, 0)) +
       chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
open("/outputs/chart.png", "wb").write(png)
heights
"""


def read_png(data):
    """(width, height, rows of RGB tuples) of an 8-bit RGB PNG without
    filters, every chunk's CRC checked."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, []
    while pos < len(data):
        n, tag = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(tag + body) & 0xffffffff, tag
        chunks.append((tag, body))
        pos += 12 + n
    assert [t for t, _ in chunks][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    w, h, depth, ctype = struct.unpack(">IIBB", chunks[0][1][:10])
    assert (depth, ctype) == (8, 2)
    raw = zlib.decompress(b"".join(b for t, b in chunks if t == b"IDAT"))
    stride = 1 + 3 * w
    rows = []
    for y in range(h):
        line = raw[y * stride:(y + 1) * stride]
        assert line[0] == 0  # filter: none
        rows.append([tuple(line[1 + 3 * x:4 + 3 * x]) for x in range(w)])
    return w, h, rows


def test_png_from_a_pure_python_writer_read_back(make_session):
    s = make_session()
    s.files.write("weather.csv", make_csv()[0])
    assert s.run_code(ANALYSE).exit_code == 0
    r = s.run_code(CHART)
    assert r.exit_code == 0, r.stderr
    heights = eval(r.text)  # a list of ints, printed by repr()
    assert [(o.path, o.content) for o in r.outputs] == [("/outputs/chart.png", None)]
    png = s.files.read(r.outputs[0].path, format="bytes")
    assert len(png) == r.outputs[0].size
    w, h, rows = read_png(png)
    assert (w, h) == (40, 40)
    red, white = (200, 30, 30), (255, 255, 255)
    for i, bar in enumerate(heights):
        x = 10 * i + 3
        assert rows[h - 1][x] == red and rows[h - bar][x] == red
        if bar < h:
            assert rows[h - bar - 1][x] == white
        assert rows[h - 1][10 * i + 9] == white  # the gap between bars


def test_pip_list_through_commands_run(make_session):
    s = make_session()
    r = s.commands.run("pip list")
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["Package", "Version"]
    assert any(l.split()[0] == "pip" for l in lines[2:])
    assert s.commands.run("pwd; id -u").stdout.split()[0] == "/workspace"
    with pytest.raises(agentsbx.CommandExitError) as e:
        s.commands.run("echo oops >&2; exit 3")
    assert e.value.exit_code == 3 and e.value.stderr == "oops\n"
    assert s.commands.run("exit 4", check=False).exit_code == 4
    assert s.commands.run(["printf", "%s-", "-a", "b"]).stdout == "-a-b-"


def interrupt_after(seconds):
    t = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    t.start()
    return t


def test_keyboard_interrupt_kills_a_20s_run_not_the_session(make_session, state_root):
    s = make_session(timeout=60)
    s.files.write("kept.txt", "still here")
    t0 = time.monotonic()
    timer = interrupt_after(2.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            # 20 s, a heartbeat in /workspace every 0.2 s
            s.run_code("import time\nfor i in range(100):\n"
                       "    open('beat.txt', 'w').write(str(i))\n    time.sleep(0.2)\n")
    finally:
        timer.cancel()
    stopped = time.monotonic() - t0
    assert stopped < 8, "the interrupted call took %.1f s" % stopped
    # The run is dead (its heartbeat stopped, its container is gone), not
    # finishing somewhere; the session lives on with its files.
    beat = s.files.read("beat.txt")
    assert [n for n in os.listdir(state_root) if not n.startswith(".")] == []
    time.sleep(1.0)
    assert s.files.read("beat.txt") == beat and int(beat) < 40
    assert s.is_running()
    r = s.run_code("print(open('kept.txt').read())")
    assert r.stdout == "still here\n"
    # A Ctrl-C during commands.run too.
    timer = interrupt_after(1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            s.commands.run("sleep 20")
    finally:
        timer.cancel()
    assert s.commands.run("echo ok").stdout == "ok\n"


def test_timeouts_and_errors_are_exceptions_with_the_runtimes_message(make_session,
                                                                      image_root, state_root):
    s = make_session(timeout=1)
    r = s.run_code("print('x', flush=True)\nwhile True: pass")
    assert r.timed_out and r.exit_code == 137 and r.stdout == "x\n"
    assert s.run_code("1 + 1", timeout=20).text == "2"
    with pytest.raises(agentsbx.SessionError) as e:
        s.files.read("missing.txt")
    assert "missing.txt" in e.value.message and "No such file" in e.value.message
    with pytest.raises(agentsbx.SessionError, match="only files under /workspace and /outputs"):
        s.files.read("/etc/passwd")
    with pytest.raises(agentsbx.SessionError) as e:
        make_session(image="no-such-image")
    assert 'image "no-such-image" not found' in e.value.message and e.value.status == 125
    with pytest.raises(agentsbx.SessionError, match="limits.memory"):
        make_session(memory="4g")
    # connect() to an open one; a closed one is an error, not a hang.
    other = agentsbx.Session.connect(s.session_id, root=state_root)
    assert other.run_code("print(3)").stdout == "3\n"
    s.close()
    s.close()  # twice: a no-op
    with pytest.raises(agentsbx.SessionError, match="closed"):
        s.run_code("print(1)")
    with pytest.raises(agentsbx.SessionError, match="no session " + s.session_id):
        other.run_code("print(1)")


def test_files_the_host_wrote_the_code_changes_renames_deletes(make_session):
    s = make_session()
    s.files.write("in/data.txt", b"from the host\n")
    r = s.run_code("import os, shutil\n"
                   "open('in/data.txt', 'a').write('and the code\\n')\n"
                   "os.rename('in/data.txt', 'in/renamed.txt')\n"
                   "text = open('in/renamed.txt').read()\n"
                   "shutil.rmtree('in')\n"
                   "text, os.listdir('.'), os.getuid() != 0")
    assert r.exit_code == 0, r.stderr
    assert r.text == "('from the host\\nand the code\\n', [], True)"


def test_twenty_sessions_opened_and_closed_leave_nothing(make_session, mine):
    sessions, uids = [], {}
    for i in range(20):
        s = make_session(timeout=20)
        s.files.write("n.txt", str(i))
        sessions.append(s)
    for i, s in enumerate(sessions):
        r = s.run_code("import os\nprint(open('n.txt').read())\nos.getuid()")
        assert r.stdout == "%d\n" % i, r
        uids[s.session_id] = int(r.text)
    # Under identities every session has a uid of its own, held while it
    # is open (by its workspace).
    assert len(set(uids.values())) == 20 and 0 not in uids.values()
    held = {u for u, _ in H.identity_holders()}
    assert set(uids.values()) <= held
    assert len(mine.servers) == 20
    for s in sessions:
        s.close()
    # No state, record, cgroup, mount or process of theirs, and none of
    # their uids held by them (a uid given back may be someone else's by
    # now: the holders' paths say whose).
    assert mine.wait_clean() == {}
