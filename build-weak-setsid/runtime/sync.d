build-weak-setsid/runtime/sync.o: runtime/sync.c runtime/sync.h \
 runtime/../lib/error.h
runtime/sync.h:
runtime/../lib/error.h:
