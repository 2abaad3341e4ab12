build-weak-setsid/runtime/features.o: runtime/features.c \
 runtime/../hooks/hooks.h runtime/../hooks/../lib/error.h \
 runtime/../hooks/../spec/spec.h runtime/../hooks/../spec/../lib/error.h \
 runtime/../spec/spec.h runtime/container.h runtime/../lib/error.h \
 runtime/mounts.h
runtime/../hooks/hooks.h:
runtime/../hooks/../lib/error.h:
runtime/../hooks/../spec/spec.h:
runtime/../hooks/../spec/../lib/error.h:
runtime/../spec/spec.h:
runtime/container.h:
runtime/../lib/error.h:
runtime/mounts.h:
