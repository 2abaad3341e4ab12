build-weak-setsid/cmd/ps.o: cmd/ps.c cmd/../lib/log.h cmd/cmd.h \
 cmd/../lib/error.h cmd/../runtime/container.h \
 cmd/../runtime/../lib/error.h
cmd/../lib/log.h:
cmd/cmd.h:
cmd/../lib/error.h:
cmd/../runtime/container.h:
cmd/../runtime/../lib/error.h:
