build-weak-setsid/spec/validate.o: spec/validate.c spec/internal.h \
 spec/spec.h spec/../lib/error.h
spec/internal.h:
spec/spec.h:
spec/../lib/error.h:
