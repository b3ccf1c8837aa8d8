/**
 * Where the SDK's transfer helpers report the bytes of fresh buffers they
 * pass on and drop soon (PartBuffers): core's GC pacer (vfs/gc-pacer.ts)
 * installs itself here when it loads, so the SDK depends on no engine of
 * the core. Without a sink (a plugin's unit test) the count goes nowhere.
 */
let sink: ((bytes: number) => void) | undefined;

/** Reports `bytes` of a fresh buffer about to become garbage. */
export function noteShortLived(bytes: number): void {
  sink?.(bytes);
}

/** Installs (or, with undefined, removes) what receives noteShortLived()'s counts. */
export function setShortLivedSink(receive: ((bytes: number) => void) | undefined): void {
  sink = receive;
}
