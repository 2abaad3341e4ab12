build-weak-setsid/spec/parse_linux.o: spec/parse_linux.c \
 spec/../lib/cleanup.h spec/internal.h spec/spec.h spec/../lib/error.h
spec/../lib/cleanup.h:
spec/internal.h:
spec/spec.h:
spec/../lib/error.h:
