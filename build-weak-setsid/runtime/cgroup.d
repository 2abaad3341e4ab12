build-weak-setsid/runtime/cgroup.o: runtime/cgroup.c \
 runtime/cgroup_internal.h runtime/cgroup.h runtime/../lib/error.h \
 runtime/../spec/spec.h runtime/../spec/../lib/error.h \
 runtime/../lib/cleanup.h runtime/../lib/log.h runtime/../lib/util.h \
 runtime/../lib/error.h
runtime/cgroup_internal.h:
runtime/cgroup.h:
runtime/../lib/error.h:
runtime/../spec/spec.h:
runtime/../spec/../lib/error.h:
runtime/../lib/cleanup.h:
runtime/../lib/log.h:
runtime/../lib/util.h:
runtime/../lib/error.h:
