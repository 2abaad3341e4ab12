build-weak-setsid/hooks/hook_proc.o: hooks/hook_proc.c hooks/hook_proc.h \
 hooks/../lib/error.h hooks/hooks.h hooks/../spec/spec.h \
 hooks/../spec/../lib/error.h hooks/../lib/log.h
hooks/hook_proc.h:
hooks/../lib/error.h:
hooks/hooks.h:
hooks/../spec/spec.h:
hooks/../spec/../lib/error.h:
hooks/../lib/log.h:
