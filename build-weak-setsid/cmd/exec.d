build-weak-setsid/cmd/exec.o: cmd/exec.c cmd/../lib/util.h \
 cmd/../lib/error.h cmd/cmd.h cmd/../lib/error.h \
 cmd/../runtime/container.h cmd/../runtime/../lib/error.h
cmd/../lib/util.h:
cmd/../lib/error.h:
cmd/cmd.h:
cmd/../lib/error.h:
cmd/../runtime/container.h:
cmd/../runtime/../lib/error.h:
