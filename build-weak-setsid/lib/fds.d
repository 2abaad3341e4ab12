build-weak-setsid/lib/fds.o: lib/fds.c lib/fds.h
lib/fds.h:
