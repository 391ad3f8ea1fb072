"""The kernel command when a kernel zygote serves the sandbox (see :mod:`.zygote`).

Jupyter starts this as the notebook's kernel process: it asks the zygote for a kernel with
Jupyter's connection file, hands over its standard streams, and lives exactly as long as
that kernel — it ends as the kernel ended (with its exit status, or killed by the same
signal), and when Jupyter kills it, the zygote kills the kernel. Standard library only,
so it starts in milliseconds (``python -I -S``).

    python -I -S zygote_client.py SOCKET REQUEST_JSON CONNECTION_FILE
"""

import json
import os
import signal
import socket
import sys


def main() -> int:
    control, request, connection_file = sys.argv[1:4]
    request = json.loads(request)
    with open(connection_file) as file:
        request["connection"] = json.load(file)
    zygote = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    zygote.connect(control)
    socket.send_fds(zygote, [json.dumps(request).encode()], [0, 1, 2])
    while True:
        data = zygote.recv(1 << 16)
        if not data:
            print("kernel zygote: the sandbox went away", file=sys.stderr)
            return 1
        reply = json.loads(data)
        if "exit" in reply:
            code = int(reply["exit"])
            if code < 0:        # killed by signal -code: so is this process
                signal.signal(-code, signal.SIG_DFL)
                os.kill(os.getpid(), -code)
            return code


if __name__ == "__main__":
    sys.exit(main())
