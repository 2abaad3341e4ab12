build-weak-setsid/spec/names.o: spec/names.c spec/internal.h spec/spec.h \
 spec/../lib/error.h
spec/internal.h:
spec/spec.h:
spec/../lib/error.h:
