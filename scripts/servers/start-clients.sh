#!/bin/bash
# Client programs the protocol tests drive (idempotent; nothing is started):
# OpenSSH's ssh/sftp/scp, rclone (sftp remote), lftp (sftp://) and paramiko
# (python3-paramiko: import it with Debian's /usr/bin/python3, not a pyenv one).
# litmus, the WebDAV protocol test suite, cadaver and davfs2 (mounts WebDAV
# through FUSE) for plugins/service-webdav.
# openssh-server and its sftp-server come too (the reference server of the
# SFTP bench; start-sftp.sh installs the server for its own sshd).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

apt_install openssh-client openssh-server openssh-sftp-server rclone lftp python3-paramiko litmus cadaver davfs2
echo "clients: $(ssh -V 2>&1), $(rclone version 2>/dev/null | head -1), $(lftp --version | head -1),"\
  "paramiko $(/usr/bin/python3 -c 'import paramiko; print(paramiko.__version__)')"
