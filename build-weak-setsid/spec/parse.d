build-weak-setsid/spec/parse.o: spec/parse.c spec/../lib/cleanup.h \
 spec/../lib/util.h spec/../lib/error.h spec/internal.h spec/spec.h \
 spec/../lib/error.h
spec/../lib/cleanup.h:
spec/../lib/util.h:
spec/../lib/error.h:
spec/internal.h:
spec/spec.h:
spec/../lib/error.h:
