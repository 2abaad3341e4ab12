#!/bin/sh
# Install what agentsbx needs to build and to run its tests (Debian 12, as
# root).  `make deps` runs this; so does .ci/run on a fresh machine.
set -eu

BUILD_PKGS="gcc make pkg-config libseccomp-dev libcap-dev libyajl-dev libmount-dev libnftables-dev libsystemd-dev"
# agentsbx mcp --listen: libmicrohttpd (HTTP/1.1, TLS through GnuTLS), dlopened.
BUILD_PKGS="$BUILD_PKGS libmicrohttpd-dev"
TEST_PKGS="libcmocka-dev busybox-static python3 python3-pytest iproute2 procps util-linux nftables uidmap"
# make check runs the quick integration tests two at a time with it.
TEST_PKGS="$TEST_PKGS python3-pytest-xdist"
# tests/mcp_http: a test certificate (TLS) and curl for the raw HTTP edge.
TEST_PKGS="$TEST_PKGS openssl curl"
# make fuzz: clang and its libFuzzer/sanitizer runtimes (clang-14 on Debian 12).
FUZZ_PKGS="clang libclang-rt-14-dev"
# make format / make lint (tests/lint/lint.sh): clang-format and cppcheck.
LINT_PKGS="clang-format cppcheck"
# Reference runtimes for the comparison tests and benchmarks, and the
# pure cgroup v2 guest (qemu, a Debian kernel unpacked by tests/vm).
REF_PKGS="runc crun"
# make bench
# runsc: gVisor, beside runc and crun in make bench (what people pick for
# untrusted code).
BENCH_PKGS="hyperfine gnuplot-nox time strace runsc"
VM_PKGS="qemu-system-x86 cpio xz-utils file e2fsprogs"
# The real callers, for the end-to-end suite (tests/e2e).
E2E_PKGS="docker.io containerd podman conmon"
# The CRI suite (tests/cri): the CNI plugins (bridge, host-local, loopback);
# crictl itself comes from ../shared/tools/crictl.
E2E_PKGS="$E2E_PKGS containernetworking-plugins"
# The sandbox's Python and node images (tests/sandbox) are made with it.
E2E_PKGS="$E2E_PKGS debootstrap"
# tests/python: Docker's Python SDK (the seed's runner against dockerd with
# runtime agentsbx) and venv (the package installed offline into a fresh one).
E2E_PKGS="$E2E_PKGS python3-docker python3-venv"

missing=""
for p in $BUILD_PKGS $TEST_PKGS $FUZZ_PKGS $LINT_PKGS $REF_PKGS $VM_PKGS $E2E_PKGS $BENCH_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
# The MCP test client (tests/sandbox/mcp-client) uses the official SDK from
# npm; any node >= 18 does (a nodesource one may be there already, with npm).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	missing="$missing nodejs npm"
fi
if [ -z "$missing" ]; then
	echo "deps: everything is installed"
	exit 0
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# Installing docker.io, containerd or podman must not start the machine's
# own daemons: the tests start private ones and stop them.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
	chmod +x /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
