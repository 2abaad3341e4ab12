build-weak-setsid/spec/parse_resources.o: spec/parse_resources.c \
 spec/../lib/util.h spec/../lib/error.h spec/internal.h spec/spec.h \
 spec/../lib/error.h
spec/../lib/util.h:
spec/../lib/error.h:
spec/internal.h:
spec/spec.h:
spec/../lib/error.h:
