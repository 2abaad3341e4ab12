build-weak-setsid/spec/validate_linux.o: spec/validate_linux.c \
 spec/../lib/util.h spec/../lib/error.h spec/internal.h spec/spec.h \
 spec/../lib/error.h
spec/../lib/util.h:
spec/../lib/error.h:
spec/internal.h:
spec/spec.h:
spec/../lib/error.h:
