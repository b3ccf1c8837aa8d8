/** How many directories a session remembers (the oldest is forgotten first). */
const MAX_DIRS = 256;

/**
 * The directories an SFTP session has opened a new upload in successfully:
 * the next OPEN of a new file in one of them is answered before the
 * storage is asked (SessionWriteOptions.early), since the refusals that
 * need the storage (a missing parent above all) are unlikely there; a
 * refusal that comes anyway answers the next WRITE or the CLOSE. The first
 * file in a directory waits for its open, so a mistyped destination is
 * still refused at OPEN, as by OpenSSH. A directory is forgotten when an
 * upload in it fails, and all of them when the session removes or renames
 * a directory.
 */
export class UploadDirs {
  private readonly dirs = new Set<string>();

  has(dir: string): boolean {
    return this.dirs.has(dir);
  }

  add(dir: string): void {
    if (this.dirs.has(dir)) return;
    if (this.dirs.size >= MAX_DIRS) this.dirs.delete(this.dirs.values().next().value!);
    this.dirs.add(dir);
  }

  forget(dir: string): void {
    this.dirs.delete(dir);
  }

  clear(): void {
    this.dirs.clear();
  }
}
