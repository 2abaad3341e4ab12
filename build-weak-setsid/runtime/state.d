build-weak-setsid/runtime/state.o: runtime/state.c runtime/state.h \
 runtime/../lib/error.h runtime/../spec/spec.h \
 runtime/../spec/../lib/error.h runtime/cgroup.h runtime/../lib/cleanup.h \
 runtime/../lib/util.h runtime/../lib/error.h
runtime/state.h:
runtime/../lib/error.h:
runtime/../spec/spec.h:
runtime/../spec/../lib/error.h:
runtime/cgroup.h:
runtime/../lib/cleanup.h:
runtime/../lib/util.h:
runtime/../lib/error.h:
