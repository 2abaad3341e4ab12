build-weak-setsid/runtime/mounts.o: runtime/mounts.c runtime/mounts.h \
 runtime/../lib/error.h runtime/../spec/spec.h \
 runtime/../spec/../lib/error.h /usr/include/libmount/libmount.h \
 runtime/../lib/cleanup.h runtime/../lib/util.h runtime/../lib/error.h
runtime/mounts.h:
runtime/../lib/error.h:
runtime/../spec/spec.h:
runtime/../spec/../lib/error.h:
/usr/include/libmount/libmount.h:
runtime/../lib/cleanup.h:
runtime/../lib/util.h:
runtime/../lib/error.h:
