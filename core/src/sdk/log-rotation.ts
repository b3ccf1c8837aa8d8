// What a rotation of the server's log file did (PluginHost.logs; core's ops/log-rotator.ts).

export interface RotateResult {
  /** The rotated file, or '' when logs go to standard output or the file did not exist yet. */
  rotated: string;
  /** Older rotated files removed to honour `keep`. */
  removed: string[];
}
