# The cloud metadata service: GET http://169.254.169.254/latest/meta-data/
token = ARGS[0]
try:
    s = socket.create_connection(("169.254.169.254", 80), timeout=3)
    s.settimeout(3)
    s.sendall(b"GET /latest/meta-data/iam/security-credentials/ HTTP/1.0\r\n"
              b"Host: 169.254.169.254\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
except OSError as e:
    failed("169.254.169.254:80 %s" % (ename(e) if e.errno else type(e).__name__))
else:
    text = data.decode("utf-8", "replace")
    if token in text:
        succeeded("metadata answered: %s" % text.splitlines()[-1].strip())
    else:
        failed("answered without the token: %r" % text[:200])
