build-weak-setsid/runtime/caps.o: runtime/caps.c runtime/caps.h \
 runtime/../lib/error.h runtime/../spec/spec.h \
 runtime/../spec/../lib/error.h runtime/../lib/log.h \
 runtime/../lib/util.h runtime/../lib/error.h
runtime/caps.h:
runtime/../lib/error.h:
runtime/../spec/spec.h:
runtime/../spec/../lib/error.h:
runtime/../lib/log.h:
runtime/../lib/util.h:
runtime/../lib/error.h:
