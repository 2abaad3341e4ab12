build-weak-setsid/cmd/main.o: cmd/main.c cmd/../lib/log.h \
 cmd/../spec/spec.h cmd/../spec/../lib/error.h cmd/../lib/fds.h cmd/cmd.h \
 cmd/../lib/error.h cmd/../runtime/container.h \
 cmd/../runtime/../lib/error.h
cmd/../lib/log.h:
cmd/../spec/spec.h:
cmd/../spec/../lib/error.h:
cmd/../lib/fds.h:
cmd/cmd.h:
cmd/../lib/error.h:
cmd/../runtime/container.h:
cmd/../runtime/../lib/error.h:
