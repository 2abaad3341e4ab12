build-weak-setsid/runtime/pathres.o: runtime/pathres.c runtime/pathres.h \
 runtime/../lib/error.h runtime/../lib/cleanup.h runtime/../lib/weaken.h
runtime/pathres.h:
runtime/../lib/error.h:
runtime/../lib/cleanup.h:
runtime/../lib/weaken.h:
