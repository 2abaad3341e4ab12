build-weak-setsid/spec/validate_process.o: spec/validate_process.c \
 spec/internal.h spec/spec.h spec/../lib/error.h
spec/internal.h:
spec/spec.h:
spec/../lib/error.h:
