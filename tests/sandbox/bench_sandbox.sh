#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Latency of one sandbox call that runs print(1) in Python:
#
#   AGENTSBX=build/agentsbx tests/sandbox/bench_sandbox.sh [RUNS]
#
# prints
#   sandbox_print1_median_ms N   `agentsbx sandbox --image python -- python3 -c 'print(1)'`,
#                                end to end (process start to exit), as a
#                                framework that shells out sees it
#   mcp_warm_print1_median_ms N  one run_code call to `agentsbx mcp --warm 1`,
#                                request written to reply read
#   session_print1_median_ms N   `agentsbx session run NAME -- python3 -c 'print(1)'`
#                                in an open session, end to end
#
# The python image is $AGENTSBX_IMAGE_ROOT/python (default
# /var/lib/agentsbx/images/python), else the test suite's cache
# (/var/cache/agentsbx-test/python).  Compare with
#   docker run --rm --runtime runc python:3-slim python3 -c 'print(1)'
# in bench/.
set -eu

RUNS=${1:-20}
HERE=$(cd "$(dirname "$0")" && pwd)
AGENTSBX=${AGENTSBX:-$HERE/../../build/agentsbx}
IMAGE_ROOT=${AGENTSBX_IMAGE_ROOT:-/var/lib/agentsbx/images}
CACHE=${AGENTSBX_TEST_CACHE:-/var/cache/agentsbx-test}

if [ ! -d "$IMAGE_ROOT/python" ]; then
	if [ ! -d "$CACHE/python" ]; then
		echo "bench_sandbox: no python image in $IMAGE_ROOT or $CACHE;" \
			"run tests/sandbox first, or:" >&2
		echo "  debootstrap --variant=minbase --include=python3 bookworm $IMAGE_ROOT/python" >&2
		exit 2
	fi
	IMAGE_ROOT=$CACHE
fi

exec /usr/bin/python3 - "$AGENTSBX" "$IMAGE_ROOT" "$RUNS" <<'EOF'
import ctypes, json, os, shutil, statistics, subprocess, sys, tempfile, time

agentsbx, image_root, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
# A private --root for the one-call runs and the MCP server: nothing is
# left under /run/agentsbx (its seccomp cache included).
own_root = tempfile.mkdtemp(prefix="agentsbx-bench-")

def cli_once():
    t = time.monotonic()
    p = subprocess.run([agentsbx, "--root", own_root, "sandbox", "--image-root", image_root,
                        "--image", "python", "--", "python3", "-c", "print(1)"],
                       capture_output=True)
    dt = time.monotonic() - t
    if p.returncode != 0 or p.stdout != b"1\n":
        sys.exit("bench_sandbox: sandbox failed: rc %d %s" % (p.returncode, p.stderr.decode()))
    return dt

def mcp_times():
    p = subprocess.Popen([agentsbx, "--root", own_root, "mcp", "--image-root", image_root,
                          "--image", "python", "--warm", "1"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    def call(i, method, params):
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method,
                                   "params": params}) + "\n").encode())
        p.stdin.flush()
        return json.loads(p.stdout.readline())
    call(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "bench", "version": "1"}})
    times = []
    for i in range(runs):
        time.sleep(0.25)  # think time: the server warms the next sandbox
        t = time.monotonic()
        r = call(i + 1, "tools/call", {"name": "run_code",
                                       "arguments": {"code": "print(1)", "language": "python"}})
        times.append(time.monotonic() - t)
        if r["result"]["structuredContent"]["stdout"] != "1\n":
            sys.exit("bench_sandbox: run_code failed: %s" % r)
    p.stdin.close()
    p.wait()
    return times

def session_times():
    # The session's server outlives `session create`: reap it here.
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    root = tempfile.mkdtemp(prefix="agentsbx-bench-")
    base = [agentsbx, "--root", root, "session"]
    subprocess.run(base + ["create", "--image-root", image_root, "--image", "python",
                           "bench"], check=True, capture_output=True)
    times = []
    try:
        for _ in range(runs):
            t = time.monotonic()
            p = subprocess.run(base + ["run", "bench", "--", "python3", "-c", "print(1)"],
                               capture_output=True)
            times.append(time.monotonic() - t)
            if p.returncode != 0 or p.stdout != b"1\n":
                sys.exit("bench_sandbox: session run failed: %s" % p.stderr.decode())
    finally:
        subprocess.run(base + ["close", "bench"], capture_output=True)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
        os.rmdir(os.path.join(root, ".sessions"))  # empty: the session is gone
        shutil.rmtree(root)  # the seccomp cache
    return times

cli_once()  # warm the page cache and the seccomp cache
cli = [cli_once() for _ in range(runs)]
mcp = mcp_times()
print("sandbox_print1_median_ms %.1f" % (statistics.median(cli) * 1000))
print("mcp_warm_print1_median_ms %.1f" % (statistics.median(mcp) * 1000))
if "session" in subprocess.run([agentsbx, "--help"], capture_output=True, text=True).stdout:
    print("session_print1_median_ms %.1f" % (statistics.median(session_times()) * 1000))
shutil.rmtree(own_root)
EOF
