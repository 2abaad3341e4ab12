build-weak-setsid/cmd/run.o: cmd/run.c cmd/cmd.h cmd/../lib/error.h \
 cmd/../runtime/container.h cmd/../runtime/../lib/error.h
cmd/cmd.h:
cmd/../lib/error.h:
cmd/../runtime/container.h:
cmd/../runtime/../lib/error.h:
