build-weak-setsid/runtime/terminal.o: runtime/terminal.c \
 runtime/terminal.h runtime/../lib/error.h runtime/../lib/cleanup.h \
 runtime/../lib/util.h runtime/../lib/error.h runtime/../lib/weaken.h \
 runtime/pathres.h runtime/internal.h runtime/../spec/spec.h \
 runtime/../spec/../lib/error.h runtime/caps.h runtime/container.h \
 runtime/mounts.h runtime/seccomp.h runtime/state.h runtime/cgroup.h \
 runtime/sync.h
runtime/terminal.h:
runtime/../lib/error.h:
runtime/../lib/cleanup.h:
runtime/../lib/util.h:
runtime/../lib/error.h:
runtime/../lib/weaken.h:
runtime/pathres.h:
runtime/internal.h:
runtime/../spec/spec.h:
runtime/../spec/../lib/error.h:
runtime/caps.h:
runtime/container.h:
runtime/mounts.h:
runtime/seccomp.h:
runtime/state.h:
runtime/cgroup.h:
runtime/sync.h:
