#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# oci-caller.py - the caller side of an OCI runtime, as containerd's runc shim and conmon are: a
# subreaper that runs `create` (with a console socket when asked), reads the pid file, runs
# `state` and `start`, waits for the pid it was given and reports how it ended. Used by oci.t.
# usage: oci-caller.py RUNC ROOT BUNDLE ID [--console] [--kill SIG] [--no-start]
# prints: pidfile=N, created=<state json status>/<pid>, [tty=<first bytes>], running=...,
#         end=exit N | end=signal N, stopped=<status>/<pid>
import ctypes, json, os, socket, subprocess, sys, time

runc, root, bundle, cid = sys.argv[1:5]
opts = sys.argv[5:]
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
base = [runc, "--root", root, "--log", os.path.join(root, "log.json"), "--log-format", "json"]

def state():
    out = subprocess.run(base + ["state", cid], capture_output=True, text=True).stdout
    j = json.loads(out)
    return "%s/%s" % (j["status"], j["pid"]), j

pidfile = os.path.join(root, cid + ".pid")
cmd = base + ["create", "--bundle", bundle, "--pid-file", pidfile]
sock = None
if "--console" in opts:
    path = os.path.join(root, cid + ".console")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(1)
    cmd += ["--console-socket", path]
cmd.append(cid)
null = open(os.devnull, "rb")
out = open(os.path.join(root, cid + ".out"), "wb")
r = subprocess.run(cmd, stdin=null, stdout=out, stderr=out)
if r.returncode != 0:
    print("create=%d" % r.returncode)
    sys.exit(0)
master = None
if sock:
    sock.settimeout(20)
    c, _ = sock.accept()
    msg, fds, _, _ = socket.recv_fds(c, 1024, 1)
    master = fds[0] if fds else None
    print("console=%s fds=%d" % (msg.decode(), len(fds)))
pid = int(open(pidfile).read())
print("pidfile=%d" % pid)
s, j = state()
print("created=%s" % s)
print("state_keys=%s" % ",".join(sorted(j)))
if "--no-start" in opts:
    subprocess.run(base + ["delete", cid])
    _, st = os.waitpid(pid, 0)
    print("end=%s" % ("signal %d" % os.WTERMSIG(st) if os.WIFSIGNALED(st) else "exit %d" % os.WEXITSTATUS(st)))
    sys.exit(0)
subprocess.run(base + ["start", cid], check=True)
s, _ = state()
print("running=%s" % s)
if "--kill" in opts:
    time.sleep(0.3)
    sig = opts[opts.index("--kill") + 1]
    subprocess.run(base + ["kill", cid, sig], check=True)
if master is not None:
    data = b""
    while True:
        try:
            b = os.read(master, 4096)
        except OSError:
            break
        if not b:
            break
        data += b
    print("tty=%s" % data.decode(errors="replace").replace("\r", "").replace("\n", "|"))
_, st = os.waitpid(pid, 0)
print("end=%s" % ("signal %d" % os.WTERMSIG(st) if os.WIFSIGNALED(st) else "exit %d" % os.WEXITSTATUS(st)))
s, _ = state()
print("stopped=%s" % s)
r = subprocess.run(base + ["delete", cid])
print("delete=%d" % r.returncode)
print("out=%s" % open(os.path.join(root, cid + ".out"), "rb").read().decode(errors="replace").replace("\n", "|"))
