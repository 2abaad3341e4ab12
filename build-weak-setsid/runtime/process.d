build-weak-setsid/runtime/process.o: runtime/process.c \
 runtime/../lib/cleanup.h runtime/../lib/fds.h runtime/../lib/log.h \
 runtime/../lib/util.h runtime/../lib/error.h runtime/../lib/weaken.h \
 runtime/pathres.h runtime/../lib/error.h runtime/internal.h \
 runtime/../spec/spec.h runtime/../spec/../lib/error.h runtime/caps.h \
 runtime/container.h runtime/mounts.h runtime/seccomp.h runtime/state.h \
 runtime/cgroup.h runtime/sync.h
runtime/../lib/cleanup.h:
runtime/../lib/fds.h:
runtime/../lib/log.h:
runtime/../lib/util.h:
runtime/../lib/error.h:
runtime/../lib/weaken.h:
runtime/pathres.h:
runtime/../lib/error.h:
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
