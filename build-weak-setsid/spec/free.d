build-weak-setsid/spec/free.o: spec/free.c spec/internal.h spec/spec.h \
 spec/../lib/error.h
spec/internal.h:
spec/spec.h:
spec/../lib/error.h:
