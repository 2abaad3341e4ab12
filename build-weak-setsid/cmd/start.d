build-weak-setsid/cmd/start.o: cmd/start.c cmd/cmd.h cmd/../lib/error.h \
 cmd/../runtime/container.h cmd/../runtime/../lib/error.h
cmd/cmd.h:
cmd/../lib/error.h:
cmd/../runtime/container.h:
cmd/../runtime/../lib/error.h:
