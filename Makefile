# agentsbx — an OCI container runtime for untrusted agent code.
#
#   make            build ./agentsbx
#   make deps       install build and test dependencies (Debian, as root)
#   make check      unit + quick integration tests (before a commit; < 5 min)
#   make test       build, then run every test (unit, integration, e2e, vm)
#   make install    install to $(DESTDIR)$(PREFIX) (default /usr/local)
#   make format     clang-format the C (.clang-format); make lint checks it + cppcheck
#   make asan       build with ASan+UBSan into build-asan/ and run the tests
#   make fuzz       libFuzzer targets (clang) into build-fuzz/, FUZZ_SECONDS each
#   make bench      benchmarks against runc and crun
#   make floor-fuzz the floor oracle's long run (FLOOR_SPECS, FLOOR_SEED; tests/floor/)

CC       ?= cc
PKGS     := libseccomp libcap yajl mount libnftables libsystemd libmicrohttpd
# A missing -dev package stops the build here, by name, instead of as a
# wall of compiler errors (`make deps` installs them all).
ifeq ($(filter deps clean format lint,$(MAKECMDGOALS)),)
PKG_MISSING := $(strip $(foreach p,$(PKGS),$(if $(shell pkg-config --exists $(p) && echo y),,$(p))))
ifneq ($(PKG_MISSING),)
$(error pkg-config cannot find: $(PKG_MISSING) (Debian: `make deps`, or install the matching -dev packages))
endif
endif
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
# libnftables, libsystemd, libmount and libmicrohttpd (agentsbx mcp
# --listen): headers only; the calls that need them dlopen them
# (lib/dynlib.h), so that every other call does not load ~18 libraries.
DLOPEN_PKGS := libnftables libsystemd mount libmicrohttpd
PKG_LIBS   := $(shell pkg-config --libs $(filter-out $(DLOPEN_PKGS),$(PKGS))) -ldl
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.1.0)
GITCOMMIT := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

BUILD    ?= build
CFLAGS   ?= -O2 -g
override CFLAGS += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
            -Wshadow -Wformat=2 -Wmissing-prototypes -fno-strict-aliasing \
            -D_GNU_SOURCE -DAGENTSBX_VERSION='"$(VERSION)"' \
            -DAGENTSBX_COMMIT='"$(GITCOMMIT)"' $(PKG_CFLAGS)
override LDLIBS += $(PKG_LIBS) -pthread

# One folder per concern (docs/design.md); the freestanding
# binaries (runtime/init/trampoline/, agent/sandbox/init/) are not library code.
LIB_SRCS  := $(sort $(wildcard lib/*.c spec/*.c spec/*/*.c runtime/*/*.c hooks/*.c agent/*/*.c))
TRAMPOLINE_CFLAGS := -Os -ffreestanding -fno-builtin -static -nostdlib -fno-stack-protector \
	-fno-asynchronous-unwind-tables -fno-pie -no-pie -Wl,--build-id=none -Wl,-z,norelro \
	-Wall -Wextra -Werror
# clang (make fuzz) finds -no-pie unused next to -static: not an error.
ifneq ($(findstring clang,$(shell $(CC) --version 2>/dev/null | head -n1)),)
TRAMPOLINE_CFLAGS += -Wno-unused-command-line-argument
endif
CMD_SRCS  := $(sort $(wildcard cmd/*.c))
EMBED_JSON := agent-seccomp agent-seccomp-ioctl
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(EMBED_JSON:%=$(BUILD)/spec/policy/embed-%.o) \
	$(BUILD)/runtime/init/embed-trampoline.o $(BUILD)/agent/sandbox/embed-sandbox-init.o
CMD_OBJS  := $(CMD_SRCS:%.c=$(BUILD)/%.o)
DEPS      := $(LIB_OBJS:.o=.d) $(CMD_OBJS:.o=.d)

UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
TOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tests/tools/%)

PYTEST   ?= /usr/bin/python3 -m pytest

PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
SYSCONFDIR ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system

.PHONY: all deps test audit-log-mark check layering docs install format lint unit integration integration-quick vmtest vmtest-systemd e2e cri-test sandbox-test python-test mcp-http-test attacks asan clean bench tools floor floor-fuzz \
	fuzz fuzz-build fuzz-bins test-fuzz

all: agentsbx

# Replaced atomically: a test or benchmark running ./agentsbx never sees a
# half-written binary.
agentsbx: $(BUILD)/agentsbx
	@cp $< $@.tmp && mv -f $@.tmp $@

$(BUILD)/agentsbx: $(CMD_OBJS) $(BUILD)/libagentsbx.a
	@echo "  LD $@"; $(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CMD_OBJS) $(BUILD)/libagentsbx.a $(LDLIBS)

$(BUILD)/libagentsbx.a: $(LIB_OBJS)
	@rm -f $@
	@ar rcs $@ $^

# The strict agent seccomp profiles, reviewed as JSON, compiled in as strings
# (spec/policy/agent-seccomp.json becomes `const char agent_seccomp_json[]`).
$(BUILD)/spec/policy/embed-%.c: spec/policy/%.json
	@mkdir -p $(dir $@)
	@{ echo '/* Generated from $< by the Makefile. */'; \
	   echo 'const char $(subst -,_,$*)_json[] ='; \
	   sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$$/\\n"/' $<; echo ';'; } > $@

$(BUILD)/spec/policy/embed-%.o: $(BUILD)/spec/policy/embed-%.c
	@echo "  CC $<"; $(CC) $(CFLAGS) -Wno-missing-variable-declarations -c -o $@ $<

# The exec trampoline (runtime/init/trampoline/trampoline.c): a freestanding
# static binary, embedded as bytes (runtime/init/trampoline.h says why).
$(BUILD)/runtime/init/trampoline.bin: runtime/init/trampoline/trampoline.c lib/nolibc.h
	@mkdir -p $(dir $@)
	@echo "  CC $<"; $(CC) $(TRAMPOLINE_CFLAGS) -o $@.elf $< && strip -o $@ $@.elf

$(BUILD)/runtime/init/embed-trampoline.c: $(BUILD)/runtime/init/trampoline.bin
	@{ echo '/* Generated from runtime/init/trampoline/trampoline.c by the Makefile. */'; \
	   echo '#include <stddef.h>'; \
	   echo 'const unsigned char agentsbx_trampoline[] = {'; \
	   od -An -v -tx1 $< | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	   echo '};'; \
	   echo "const size_t agentsbx_trampoline_len = sizeof(agentsbx_trampoline);"; } > $@

# The sandbox's PID 1 (agent/sandbox/init/init.c): the same kind of
# freestanding binary, written into each sandbox as /.agentsbx/init.
$(BUILD)/agent/sandbox/sandbox-init.bin: agent/sandbox/init/init.c lib/nolibc.h
	@mkdir -p $(dir $@)
	@echo "  CC $<"; $(CC) $(TRAMPOLINE_CFLAGS) -o $@.elf $< && strip -o $@ $@.elf

$(BUILD)/agent/sandbox/embed-sandbox-init.c: $(BUILD)/agent/sandbox/sandbox-init.bin
	@{ echo '/* Generated from agent/sandbox/init/init.c by the Makefile. */'; \
	   echo '#include <stddef.h>'; \
	   echo 'const unsigned char agentsbx_sandbox_init[] = {'; \
	   od -An -v -tx1 $< | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	   echo '};'; \
	   echo "const size_t agentsbx_sandbox_init_len = sizeof(agentsbx_sandbox_init);"; } > $@

$(BUILD)/agent/sandbox/embed-sandbox-init.o: $(BUILD)/agent/sandbox/embed-sandbox-init.c
	@echo "  CC $<"; $(CC) $(CFLAGS) -Wno-missing-variable-declarations -c -o $@ $<

$(BUILD)/runtime/init/embed-trampoline.o: $(BUILD)/runtime/init/embed-trampoline.c
	@echo "  CC $<"; $(CC) $(CFLAGS) -Wno-missing-variable-declarations -c -o $@ $<

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC $<"; $(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

# The two objects that use AGENTSBX_COMMIT (--version, and the seccomp
# cache's key) are rebuilt when the commit changes: a stale one printed an
# older commit and kept an older build's cache entries valid.
COMMIT_STAMP := $(BUILD)/.commit-$(GITCOMMIT)
$(COMMIT_STAMP):
	@mkdir -p $(dir $@); rm -f $(BUILD)/.commit-*; touch $@
$(BUILD)/cmd/main.o $(BUILD)/runtime/seccomp/cache.o: $(COMMIT_STAMP)

$(BUILD)/tests/unit/%: tests/unit/%.c $(BUILD)/libagentsbx.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-missing-prototypes -o $@ $< $(BUILD)/libagentsbx.a $(LDLIBS) -lcmocka

# Probes run inside containers: static, so that a busybox rootfs suffices.
$(BUILD)/tests/tools/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -static -o $@ $<

tools: $(TOOL_BINS)

deps:
	./tests/install-deps.sh

# Every unit binary runs; the target fails at the end if any failed.
unit: $(UNIT_BINS) tools
	@failed=""; for t in $(UNIT_BINS); do echo "== $$t"; \
	  SPEC_TESTDATA=$(CURDIR)/tests/unit/data OCI_SCHEMA_TESTS=$(CURDIR)/../shared/reference/oci-runtime-spec/schema/test \
	  TOOLS=$(CURDIR)/$(BUILD)/tests/tools $$t || failed="$$failed $$t"; done; \
	  if [ -n "$$failed" ]; then echo "unit: FAILED:$$failed"; exit 1; fi

# Every integration test (make test); integration-quick, which `make check`
# runs, leaves out the ones marked slow (tests/integration/conftest.py: the
# "weak" variants, which build build-weak-NAME, and long-by-design tests).
RUN_INTEGRATION = AGENTSBX=$(CURDIR)/$(BUILD)/agentsbx TOOLS=$(CURDIR)/$(BUILD)/tests/tools \
	  $(PYTEST) -q -p no:cacheprovider
integration: agentsbx tools
	$(RUN_INTEGRATION) tests/integration

# Two at a time (pytest-xdist, when installed): every test has its own
# state root, bundle, ids and netns, as when several checkouts run the suite
# side by side on one machine.  The full run stays serial: two workers
# could build the same build-weak-NAME at once.  CHECK_JOBS=0: serial.
CHECK_JOBS ?= 2
integration-quick: agentsbx tools
	$(RUN_INTEGRATION) $$(/usr/bin/python3 -c 'import xdist' 2>/dev/null && echo "-n $(CHECK_JOBS)") \
	  -m "not slow" tests/integration

# The floor oracle (tests/floor/README.md): mutated hostile specs through
# create, every accepted one checked from the host.  `floor` is make test's
# bounded slice (FLOOR_SLICE_SPECS of seed slice-1, the regressions, the
# issue-26 rows against their weak builds); `floor-fuzz` the long run,
# FLOOR_SPECS specs of seed FLOOR_SEED (default: the time, printed).
FLOOR_SPECS ?= 5000
FLOOR_SEED  ?=
floor: agentsbx tools
	$(RUN_INTEGRATION) -rsx tests/floor

floor-fuzz: agentsbx tools
	AGENTSBX=$(CURDIR)/$(BUILD)/agentsbx TOOLS=$(CURDIR)/$(BUILD)/tests/tools \
	  FLOOR_SPECS=$(FLOOR_SPECS) FLOOR_SEED=$(FLOOR_SEED) /usr/bin/python3 tests/floor/floor_fuzz.py run

# The cgroup v2 suite in a throw-away pure v2 guest (QEMU/TCG, tests/vm/);
# 77 is "qemu cannot run here", reported loudly by the script.
vmtest: all tools
	BUILD=$(BUILD) tests/vm/run-cgroup2-tests.sh || [ $$? = 77 ]

# Docker, containerd (ctr) and podman driving agentsbx; its own pytest
# process (both suites make pytest a subreaper with a reaper thread).
e2e: agentsbx
	AGENTSBX=$(CURDIR)/$(BUILD)/agentsbx $(PYTEST) -q -p no:cacheprovider -rsx tests/e2e

# agentsbx sandbox and agentsbx mcp (builds Python and node images once,
# cached under /var/cache/agentsbx-test); its own pytest process.
sandbox-test: agentsbx
	AGENTSBX=$(CURDIR)/$(BUILD)/agentsbx $(PYTEST) -q -p no:cacheprovider -rsx tests/sandbox

# The Python package (python/: Sandbox, Session, the run_python tool) and
# Docker's Python SDK driving a private dockerd with runtime agentsbx: the
# tutorial's hostile programs and print(1) latency, written to
# tests/python/results.md; its own pytest process (a subreaper, as e2e).
python-test: agentsbx tools
	AGENTSBX=$(CURDIR)/$(BUILD)/agentsbx $(PYTEST) -q -p no:cacheprovider -rsx tests/python

# agentsbx mcp --listen: MCP over Streamable HTTP (the conformance suite,
# the SDK, LangChain and the AI SDK from npm, tenants, the edge, TLS); its
# own pytest process.  A few minutes; the npm clients are installed once.
mcp-http-test: agentsbx
	AGENTSBX=$(CURDIR)/$(BUILD)/agentsbx $(PYTEST) -q -p no:cacheprovider -rsx tests/mcp_http

# --systemd-cgroup in a guest booted with systemd (pure v2, then hybrid).
vmtest-systemd: all
	BUILD=$(BUILD) tests/vm/systemd/run-systemd-tests.sh || [ $$? = 77 ]

# The attack suite: hostile programs through a plain `docker run`, agentsbx
# against runc and hardened runc; writes tests/attacks/results.md.
attacks: agentsbx
	AGENTSBX=$(CURDIR)/$(BUILD)/agentsbx $(PYTEST) -q -p no:cacheprovider -rsx tests/attacks

# Pods through containerd's CRI plugin driven by crictl, as the kubelet
# drives them: runc, agentsbx (default policy) and agentsbx with
# networkAllowed side by side; writes tests/cri/results.md.
cri-test: agentsbx
	AGENTSBX=$(CURDIR)/$(BUILD)/agentsbx $(PYTEST) -q -p no:cacheprovider -rsx tests/cri

# The one-way flow of docs/design.md, checked on the includes and calls.
layering: agentsbx
	BUILD=$(BUILD) tests/layering/check.sh
	tests/layering/plant.sh $(BUILD)

# What a contributor runs before a commit: unit + the integration tests not
# marked slow (under 5 minutes; `make integration` runs them all).
check: layering unit integration-quick

# The C of lib spec runtime cmd hooks agent: `make format` rewrites it as
# .clang-format says; `make lint` checks it (the layering, clang-format and
# cppcheck, tests/lint/lint.sh) and changes nothing.
format:
	clang-format -i --style=file $$(find lib spec runtime cmd hooks agent -name '*.[ch]')

lint: layering
	tests/lint/lint.sh
	tests/docs/check.sh $(BUILD)/agentsbx

# docs/policy-fields.md from the policy's own field table.
docs: agentsbx
	$(BUILD)/agentsbx policy fields > docs/policy-fields.md

# The binary, the example policy under /etc/agentsbx/ as
# policy.json.example (an operator's own policy.json is never touched, and
# an example already there is kept), and the MCP server's systemd unit
# (agentsbx mcp --listen, contrib/systemd/), its ExecStart pointed at BINDIR.
install: agentsbx
	install -D -m 0755 agentsbx $(DESTDIR)$(BINDIR)/agentsbx
	install -d -m 0755 $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|/usr/local/bin/agentsbx|$(BINDIR)/agentsbx|' contrib/systemd/agentsbx-mcp.service \
	  > $(DESTDIR)$(SYSTEMDUNITDIR)/agentsbx-mcp.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/agentsbx-mcp.service
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/agentsbx
	[ -e $(DESTDIR)$(SYSCONFDIR)/agentsbx/policy.json.example ] || \
	  install -m 0644 policy.json.example $(DESTDIR)$(SYSCONFDIR)/agentsbx/policy.json.example

test: audit-log-mark lint unit test-fuzz integration floor vmtest vmtest-systemd e2e cri-test sandbox-test python-test mcp-http-test attacks
	@AUDIT_LOG_MARK=$(BUILD)/.audit-log-size tests/cleanup-after-tests.sh

# The default audit log's size before the tests: they must not write it.
audit-log-mark:
	@mkdir -p $(BUILD) && (stat -c %s /var/log/agentsbx/policy.log 2>/dev/null || echo 0) > $(BUILD)/.audit-log-size

# The unit and integration tests against an ASan+UBSan build (the guest and
# the engines run the plain build: their own processes are not ours).
asan:
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" unit integration

# Coverage-guided fuzzing (tests/fuzz/README.md): one libFuzzer target per
# parser of outside input, built with clang and ASan+UBSan into build-fuzz/
# (the library too, instrumented for coverage), each run FUZZ_SECONDS.
FUZZ_BUILD   ?= build-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
TEST_FUZZ_SECONDS ?= 30
FUZZ_CFLAGS  := -O1 -g -fsanitize=fuzzer-no-link,address,undefined \
	-fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_SRCS    := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS    := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/tests/fuzz/%)

fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) CFLAGS="$(FUZZ_CFLAGS)" \
	  LDFLAGS="-fsanitize=address,undefined" fuzz-bins

fuzz-bins: $(FUZZ_BINS)

# The MCP target stops at the hand-off of a parsed call (fuzz_mcp.c).
$(BUILD)/tests/fuzz/fuzz_mcp: FUZZ_LDFLAGS := -Wl,--wrap=mcp_calls_start,--wrap=mcp_calls_cancel
# The HTTP request path too (fuzz_mcp_http.c).
$(BUILD)/tests/fuzz/fuzz_mcp_http: FUZZ_LDFLAGS := -Wl,--wrap=mcp_calls_start,--wrap=mcp_calls_cancel

$(BUILD)/tests/fuzz/%: tests/fuzz/%.c $(BUILD)/libagentsbx.a
	@mkdir -p $(dir $@)
	@echo "  FUZZ $@"; $(CC) $(CFLAGS) -fsanitize=fuzzer -Wno-missing-prototypes -MMD -MP \
	  -o $@ $< $(BUILD)/libagentsbx.a $(FUZZ_LDFLAGS) $(LDLIBS)

fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# make test's share: every target, TEST_FUZZ_SECONDS each.
test-fuzz:
	$(MAKE) fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS)

# agentsbx, runc and crun side by side (this host and the v2 guest), with
# hyperfine; writes bench/results/report.md and chart.png.
bench:
	./bench/run.sh

clean:
	rm -rf build build-asan build-fuzz agentsbx

-include $(DEPS) $(wildcard $(BUILD)/tests/fuzz/*.d)

# Escape regression tests: a build with one defence turned off (lib/weaken.h).
weak-%:
	$(MAKE) BUILD=build-weak-$* CFLAGS='-O2 -g -DAGENTSBX_WEAKEN=\"$*\"' build-weak-$*/agentsbx
