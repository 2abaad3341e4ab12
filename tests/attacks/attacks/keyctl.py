# The kernel keyring: add_key(2) into the process keyring, keyctl(2) join
# a new session keyring.
r, e = syscall(248, b"user", b"agentsbx-attack", b"payload", 7, -2)  # add_key, KEY_SPEC_PROCESS_KEYRING
r2, e2 = syscall(250, 1, b"agentsbx-attack")  # keyctl(KEYCTL_JOIN_SESSION_KEYRING)
if r > 0 or r2 > 0:
    succeeded("add_key: %s, keyctl(JOIN_SESSION_KEYRING): %s" % (e or "serial %d" % r, e2 or "serial %d" % r2))
else:
    failed("add_key %s, keyctl %s" % (e, e2))
