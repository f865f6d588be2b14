#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run two QEMUs joined by socketpairs (the two-guest wire tier, scripts/wire.sh).

Usage: pair.py [options] LOG_A LOG_B -- COMMAND_A... -- COMMAND_B...

Each @SOCKn@ in a command is replaced by the file descriptor of that guest's
end of socketpair n (AF_UNIX, SOCK_STREAM), passed to it: -netdev
socket,fd=@SOCK0@ joins the two NICs, -chardev socket,fd=@SOCK1@ two
virtio-serial ports. The harness keeps no end open, so when one QEMU exits
the other sees the link and the port close.

Each guest's console (stdout and stderr) goes to its log file; lines
matching --show (or, with -v, every line) are printed as "A| line" or
"B| line". Both are bounded by --timeout; once one has exited, the other
has --grace seconds left. Exit status: 0 if both exited with 0, 124 if
one had to be killed, else 1; SIGINT, SIGTERM or SIGHUP kill both.
"""

import argparse
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--timeout", type=float, required=True)
    ap.add_argument("--grace", type=float, default=60)
    ap.add_argument("--show", default=None)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("log_a")
    ap.add_argument("log_b")
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    args = ap.parse_args()

    rest = args.rest
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if "--" not in rest:
        ap.error("expected -- COMMAND_A... -- COMMAND_B...")
    cut = rest.index("--")
    cmds = [rest[:cut], rest[cut + 1:]]
    if not cmds[0] or not cmds[1]:
        ap.error("empty command")

    npairs = 0
    for cmd in cmds:
        for a in cmd:
            for m in re.finditer(r"@SOCK(\d+)@", a):
                npairs = max(npairs, int(m.group(1)) + 1)
    pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(npairs)]

    show = re.compile(args.show) if args.show else None
    names = ["A", "B"]
    procs = []
    logs = []
    for i, cmd in enumerate(cmds):
        ends = [p[i] for p in pairs]
        for e in ends:
            os.set_inheritable(e.fileno(), True)
        argv = [re.sub(r"@SOCK(\d+)@", lambda m: str(ends[int(m.group(1))].fileno()), a)
                for a in cmd]
        logs.append(open(args.log_a if i == 0 else args.log_b, "wb"))
        procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      pass_fds=[e.fileno() for e in ends],
                                      start_new_session=True))
    for p in pairs:
        p[0].close()
        p[1].close()

    def stop(signum, _frame):
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        sys.stderr.write("pair: signal %d: both guests killed\n" % signum)
        sys.exit(128 + signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)

    sel = selectors.DefaultSelector()
    partial = [b"", b""]
    for i, p in enumerate(procs):
        sel.register(p.stdout, selectors.EVENT_READ, i)

    def emit(i, line):
        text = line.decode("utf-8", "replace").replace("\r", "")
        if args.verbose or (show and show.search(text)):
            sys.stdout.write("%s| %s\n" % (names[i], text))
            sys.stdout.flush()

    deadline = time.monotonic() + args.timeout
    killed = False
    open_pipes = 2
    while open_pipes or any(p.poll() is None for p in procs):
        now = time.monotonic()
        done = [p.poll() is not None for p in procs]
        if any(done) and not all(done):
            deadline = min(deadline, now + args.grace)
        if now >= deadline and not killed:
            for i, p in enumerate(procs):
                if p.poll() is None:
                    sys.stderr.write("pair: guest %s did not finish in time: killed\n" % names[i])
                    try:
                        os.killpg(p.pid, signal.SIGTERM)
                    except ProcessLookupError:
                        pass
            killed = True
            deadline = now + 5
        elif now >= deadline and killed:
            for p in procs:
                if p.poll() is None:
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            deadline = now + 5
        if not open_pipes:
            time.sleep(0.2)
            continue
        for key, _ in sel.select(timeout=0.5):
            i = key.data
            data = os.read(key.fileobj.fileno(), 65536)
            if not data:
                sel.unregister(key.fileobj)
                open_pipes -= 1
                if partial[i]:
                    emit(i, partial[i])
                    partial[i] = b""
                continue
            logs[i].write(data)
            logs[i].flush()
            buf = partial[i] + data
            *lines, partial[i] = buf.split(b"\n")
            for line in lines:
                emit(i, line)

    for f in logs:
        f.close()
    rcs = [p.wait() for p in procs]
    for i, rc in enumerate(rcs):
        if rc != 0:
            sys.stderr.write("pair: guest %s: qemu exit status %d\n" % (names[i], rc))
    if killed:
        return 124
    return 0 if all(rc == 0 for rc in rcs) else 1


if __name__ == "__main__":
    sys.exit(main())
