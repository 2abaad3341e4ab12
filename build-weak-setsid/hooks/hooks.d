build-weak-setsid/hooks/hooks.o: hooks/hooks.c hooks/hooks.h \
 hooks/../lib/error.h hooks/../spec/spec.h hooks/../spec/../lib/error.h \
 hooks/../lib/cleanup.h hooks/../lib/log.h hooks/../lib/util.h \
 hooks/../lib/error.h hooks/hook_proc.h
hooks/hooks.h:
hooks/../lib/error.h:
hooks/../spec/spec.h:
hooks/../spec/../lib/error.h:
hooks/../lib/cleanup.h:
hooks/../lib/log.h:
hooks/../lib/util.h:
hooks/../lib/error.h:
hooks/hook_proc.h:
