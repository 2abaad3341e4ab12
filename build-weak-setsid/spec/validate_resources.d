build-weak-setsid/spec/validate_resources.o: spec/validate_resources.c \
 spec/internal.h spec/spec.h spec/../lib/error.h
spec/internal.h:
spec/spec.h:
spec/../lib/error.h:
