build-weak-setsid/lib/util.o: lib/util.c lib/util.h lib/error.h \
 lib/cleanup.h
lib/util.h:
lib/error.h:
lib/cleanup.h:
