"""A paramiko SFTP client driven by the tests (run by Debian's python3, which has python3-paramiko).

Reads one JSON object on stdin:
  {"port": P, "user": U, "key": FILE?, "password": PW?, "code": TOTP?, "ops": [{"op": NAME, ...}, ...]}
logs in (the key, then the password, then keyboard-interactive answering the password and the code,
each only when given and while the server asks for more), runs the operations in order and prints
one JSON object: {"auth": "ok"} or {"auth": "failed", "error": ...}, and "results": one entry per
operation, {"ok": VALUE} or {"error": MESSAGE, "errno": N}. An operation's failure does not stop
the others.
"""
import json
import sys

import paramiko


def login(spec):
    t = paramiko.Transport(("127.0.0.1", spec["port"]))
    t.start_client(timeout=20)
    user = spec["user"]
    prompts = []

    def answer(_title, _instructions, asked):
        out = []
        for text, _echo in asked:
            prompts.append(text)
            out.append(spec.get("code", "") if "code" in text.lower() else spec.get("password", ""))
        return out

    if spec.get("key"):
        t.auth_publickey(user, paramiko.Ed25519Key.from_private_key_file(spec["key"]))
    if not t.is_authenticated() and spec.get("password") is not None and not spec.get("interactive"):
        t.auth_password(user, spec["password"])
    if not t.is_authenticated():
        t.auth_interactive(user, answer)
    return t, prompts


def run(sftp, t, op):
    name = op["op"]
    if name == "put":
        return sftp.put(op["local"], op["remote"]).st_size
    if name == "get":
        sftp.get(op["remote"], op["local"])
        return True
    if name == "listdir":
        return sorted(sftp.listdir(op["path"]))
    if name == "stat":
        st = sftp.stat(op["path"])
        return {"size": st.st_size, "mode": st.st_mode, "mtime": st.st_mtime}
    if name == "rename":
        sftp.rename(op["from"], op["to"])
        return True
    if name == "posix_rename":
        sftp.posix_rename(op["from"], op["to"])
        return True
    if name == "remove":
        sftp.remove(op["path"])
        return True
    if name == "mkdir":
        sftp.mkdir(op["path"])
        return True
    if name == "rmdir":
        sftp.rmdir(op["path"])
        return True
    if name == "chmod":
        sftp.chmod(op["path"], op["mode"])
        return True
    if name == "utime":
        sftp.utime(op["path"], (op["mtime"], op["mtime"]))
        return True
    if name in ("append", "seek_write"):
        # the rest of a local file from `from` on: an interrupted upload resumed
        with open(op["local"], "rb") as f:
            f.seek(op["from"])
            data = f.read()
        with sftp.open(op["remote"], "a" if name == "append" else "r+") as r:
            if name == "seek_write":
                r.seek(op["from"])
            r.write(data)
        return len(data)
    if name == "abandon":
        # an upload cut short: `bytes` written, then the connection dropped without a CLOSE
        with open(op["local"], "rb") as f:
            data = f.read(op["bytes"])
        r = sftp.open(op["remote"], "w")
        r.write(data)
        r.flush()
        t.sock.close()
        return len(data)
    raise ValueError("unknown op " + name)


def main():
    spec = json.load(sys.stdin)
    out = {}
    try:
        t, prompts = login(spec)
    except (paramiko.SSHException, EOFError) as e:
        print(json.dumps({"auth": "failed", "error": "%s: %s" % (type(e).__name__, e)}))
        return
    out["auth"] = "ok"
    out["prompts"] = prompts
    results = []
    try:
        sftp = paramiko.SFTPClient.from_transport(t)
    except (paramiko.SSHException, EOFError) as e:
        out["sftp"] = "%s: %s" % (type(e).__name__, e)
        print(json.dumps(out))
        return
    for op in spec.get("ops", []):
        try:
            results.append({"ok": run(sftp, t, op)})
        except (IOError, OSError, EOFError, paramiko.SSHException) as e:
            results.append({"error": str(e), "errno": getattr(e, "errno", None)})
    out["results"] = results
    try:
        t.close()
    except Exception:  # noqa: BLE001 (already dropped by "abandon")
        pass
    print(json.dumps(out))


main()
