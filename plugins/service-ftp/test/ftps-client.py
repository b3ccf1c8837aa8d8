"""Python ftplib over explicit FTPS: upload, list, download, with or without TLS session reuse.

usage: ftps-client.py PORT USER PASSWORD CAFILE MODE FILE
MODE reuse: data connections resume the control connection's TLS session (as servers
requiring reuse expect); noreuse: ftplib's stock FTP_TLS (a fresh session per data connection);
reuse-active: as reuse, in active mode (PORT: the server connects to the client).
HASH over the TLS control connection is checked against hashlib.
Prints one line per step; exits 0 when every step passed.
"""
import ftplib
import hashlib
import io
import ssl
import sys

port, user, password, cafile, mode, path = sys.argv[1:7]


class ReusingFTP_TLS(ftplib.FTP_TLS):
    def ntransfercmd(self, cmd, rest=None):
        conn, size = ftplib.FTP.ntransfercmd(self, cmd, rest)
        if self._prot_p:
            conn = self.context.wrap_socket(conn, server_hostname=self.host, session=self.sock.session)
        return conn, size


ctx = ssl.create_default_context(cafile=cafile)
cls = ReusingFTP_TLS if mode.startswith("reuse") else ftplib.FTP_TLS
ftp = cls(context=ctx, timeout=30)
ftp.connect("127.0.0.1", int(port))
ftp.auth()
ftp.login(user, password)
ftp.prot_p()
if mode.endswith("-active"):
    ftp.set_pasv(False)
data = b"0123456789" * 100000
try:
    print(ftp.storbinary("STOR " + path, io.BytesIO(data)))
    print("names", ftp.nlst())
    got = io.BytesIO()
    print(ftp.retrbinary("RETR " + path, got.write))
    print("equal", got.getvalue() == data)
    rest = io.BytesIO()
    ftp.retrbinary("RETR " + path, rest.write, rest=999990)
    print("rest", rest.getvalue() == data[999990:])
    print("mlsd", [name for name, facts in ftp.mlsd() if facts.get("type") == "file"])
    print("hash", ftp.sendcmd("HASH " + path) == "213 SHA-256 0-%d %s %s" % (len(data), hashlib.sha256(data).hexdigest(), path))
except ftplib.Error as e:
    print("error", e)
    sys.exit(3)
except OSError as e:
    # the server cut the data connection: its reason comes on the control connection
    try:
        ftp.getresp()
    except ftplib.Error as reply:
        print("error", reply)
        sys.exit(3)
    print("cut", e)
    sys.exit(4)
ftp.quit()
