build-weak-setsid/spec/default.o: spec/default.c spec/../lib/util.h \
 spec/../lib/error.h spec/internal.h spec/spec.h spec/../lib/error.h
spec/../lib/util.h:
spec/../lib/error.h:
spec/internal.h:
spec/spec.h:
spec/../lib/error.h:
