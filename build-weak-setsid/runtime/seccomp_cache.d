build-weak-setsid/runtime/seccomp_cache.o: runtime/seccomp_cache.c \
 runtime/seccomp.h runtime/../lib/error.h runtime/../spec/spec.h \
 runtime/../spec/../lib/error.h runtime/../lib/cleanup.h \
 runtime/../lib/log.h runtime/../lib/util.h runtime/../lib/error.h
runtime/seccomp.h:
runtime/../lib/error.h:
runtime/../spec/spec.h:
runtime/../spec/../lib/error.h:
runtime/../lib/cleanup.h:
runtime/../lib/log.h:
runtime/../lib/util.h:
runtime/../lib/error.h:
