build-weak-setsid/runtime/exec.o: runtime/exec.c runtime/../lib/cleanup.h \
 runtime/../lib/log.h runtime/../lib/util.h runtime/../lib/error.h \
 runtime/../lib/weaken.h runtime/internal.h runtime/../lib/error.h \
 runtime/../spec/spec.h runtime/../spec/../lib/error.h runtime/caps.h \
 runtime/container.h runtime/mounts.h runtime/seccomp.h runtime/state.h \
 runtime/cgroup.h runtime/sync.h runtime/lifecycle.h runtime/terminal.h
runtime/../lib/cleanup.h:
runtime/../lib/log.h:
runtime/../lib/util.h:
runtime/../lib/error.h:
runtime/../lib/weaken.h:
runtime/internal.h:
runtime/../lib/error.h:
runtime/../spec/spec.h:
runtime/../spec/../lib/error.h:
runtime/caps.h:
runtime/container.h:
runtime/mounts.h:
runtime/seccomp.h:
runtime/state.h:
runtime/cgroup.h:
runtime/sync.h:
runtime/lifecycle.h:
runtime/terminal.h:
