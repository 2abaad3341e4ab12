build-weak-setsid/cmd/spec.o: cmd/spec.c cmd/../lib/log.h \
 cmd/../lib/util.h cmd/../lib/error.h cmd/../spec/spec.h \
 cmd/../spec/../lib/error.h cmd/cmd.h cmd/../lib/error.h \
 cmd/../runtime/container.h cmd/../runtime/../lib/error.h
cmd/../lib/log.h:
cmd/../lib/util.h:
cmd/../lib/error.h:
cmd/../spec/spec.h:
cmd/../spec/../lib/error.h:
cmd/cmd.h:
cmd/../lib/error.h:
cmd/../runtime/container.h:
cmd/../runtime/../lib/error.h:
