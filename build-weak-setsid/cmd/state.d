build-weak-setsid/cmd/state.o: cmd/state.c cmd/cmd.h cmd/../lib/error.h \
 cmd/../runtime/container.h cmd/../runtime/../lib/error.h
cmd/cmd.h:
cmd/../lib/error.h:
cmd/../runtime/container.h:
cmd/../runtime/../lib/error.h:
