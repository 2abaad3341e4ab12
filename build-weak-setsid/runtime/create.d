build-weak-setsid/runtime/create.o: runtime/create.c \
 runtime/../hooks/hooks.h runtime/../hooks/../lib/error.h \
 runtime/../hooks/../spec/spec.h runtime/../hooks/../spec/../lib/error.h \
 runtime/../lib/cleanup.h runtime/../lib/log.h runtime/../lib/util.h \
 runtime/../lib/error.h runtime/internal.h runtime/../lib/error.h \
 runtime/../spec/spec.h runtime/caps.h runtime/container.h \
 runtime/mounts.h runtime/seccomp.h runtime/state.h runtime/cgroup.h \
 runtime/sync.h runtime/terminal.h
runtime/../hooks/hooks.h:
runtime/../hooks/../lib/error.h:
runtime/../hooks/../spec/spec.h:
runtime/../hooks/../spec/../lib/error.h:
runtime/../lib/cleanup.h:
runtime/../lib/log.h:
runtime/../lib/util.h:
runtime/../lib/error.h:
runtime/internal.h:
runtime/../lib/error.h:
runtime/../spec/spec.h:
runtime/caps.h:
runtime/container.h:
runtime/mounts.h:
runtime/seccomp.h:
runtime/state.h:
runtime/cgroup.h:
runtime/sync.h:
runtime/terminal.h:
