build-weak-setsid/runtime/cgroup_cmds.o: runtime/cgroup_cmds.c \
 runtime/../lib/cleanup.h runtime/../lib/util.h runtime/../lib/error.h \
 runtime/lifecycle.h runtime/../lib/error.h runtime/container.h \
 runtime/state.h runtime/../spec/spec.h runtime/../spec/../lib/error.h \
 runtime/cgroup.h
runtime/../lib/cleanup.h:
runtime/../lib/util.h:
runtime/../lib/error.h:
runtime/lifecycle.h:
runtime/../lib/error.h:
runtime/container.h:
runtime/state.h:
runtime/../spec/spec.h:
runtime/../spec/../lib/error.h:
runtime/cgroup.h:
