build-weak-setsid/spec/parse_process.o: spec/parse_process.c \
 spec/internal.h spec/spec.h spec/../lib/error.h
spec/internal.h:
spec/spec.h:
spec/../lib/error.h:
