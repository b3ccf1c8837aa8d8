'use strict';
// GCS test emulator: firebase-tools' Cloud Storage emulator (plain JS on
// express) run in-process, without the Java security-rules runtime.
//   node emulator.cjs [port]      (default 19002; listens on 127.0.0.1)
// Set TMPDIR: object data lives under $TMPDIR/firebase/storage/blobs.
// What this wrapper changes, and why:
//  - rules runtime/manager are stubbed and every request goes through the
//    admin storage layer: the stock emulator needs Java 21 and a downloaded jar;
//  - the emulator is registered in EmulatorRegistry, else every call 500s
//    ("Cannot determine host and port of storage");
//  - '/storage/v1/b/...' is rewritten to '/b/...': the emulator routes copy,
//    rewriteTo and patch only without the prefix that @google-cloud/storage v7 sends;
//  - resumable uploads may come in several chunks: the stock emulator
//    finalizes the object on the first PUT. Non-final chunks and 'bytes */*'
//    status queries get 308 + 'Range: bytes=0-N'; bytes the server already has
//    are trimmed; the final chunk is handed to the emulator, which finalizes;
//  - an object's bytes are read only when they are sent: the stock emulator
//    read the whole object for every metadata request too (213-236 ms for
//    256 MiB), which Cloud Storage does not, and which made every download
//    that also asks the metadata look twice as slow.
const { StorageEmulator } = require('firebase-tools/lib/emulator/storage');
const { EmulatorRegistry } = require('firebase-tools/lib/emulator/registry');

const port = Number(process.argv[2] || 19002);
const PROJECT = 'demo-ferry';
const CONTENT_RANGE = /^bytes (?:\*|(\d+)-(\d+))\/(\*|\d+)$/;
const RESUMABLE_PUT = /^\/upload\/storage\/v1\/b\/[^/]+\/o\?(?:.*&)?upload_id=([^&]+)/;

function noRules(emulator) {
  for (const part of [emulator._rulesRuntime, emulator._rulesManager]) {
    part.start = async () => undefined;
    part.stop = async () => undefined;
  }
  emulator._storageLayer = emulator._adminStorageLayer;
}

/**
 * getObject of the storage layer with the bytes read on first use: the
 * metadata route uses only the metadata, the media and copy routes read the
 * bytes once. Same checks and errors as the stock method (no rules here).
 */
function bytesOnUse(emulator) {
  for (const layer of new Set([emulator._storageLayer, emulator._adminStorageLayer])) {
    const getObject = layer.getObject;
    const getBytes = layer.getBytes;
    // the stock method, on a view of the layer whose getBytes reads nothing (the layer itself is not
    // changed: other requests in flight keep reading bytes)
    const noBytes = Object.create(layer, { getBytes: { value: () => undefined } });
    layer.getObject = async (request) => {
      const { metadata } = await getObject.call(noBytes, request);
      let data;
      return {
        metadata,
        get data() {
          if (data === undefined) data = getBytes.call(layer, request.bucketId, request.decodedObjectId);
          return data;
        },
      };
    };
  }
}

/** Answers "resume incomplete" with the byte range stored so far. */
function incomplete(res, stored) {
  if (stored > 0) res.setHeader('Range', `bytes=0-${stored - 1}`);
  res.statusCode = 308;
  res.end();
}

function chunkedUploads(emulator) {
  const app = emulator.getApp();
  const uploads = emulator.uploadService;
  const handle = app.handle.bind(app);
  app.handle = (req, res, next) => {
    req.url = req.url.replace(/^\/storage\/v1\/b\//, '/b/');
    const put = req.method === 'PUT' ? RESUMABLE_PUT.exec(req.url) : null;
    const range = put ? CONTENT_RANGE.exec(req.headers['content-range'] || '') : null;
    if (!put || !range) return handle(req, res, next);
    let upload;
    try {
      upload = uploads.getResumableUpload(decodeURIComponent(put[1]));
    } catch {
      return handle(req, res, next); // unknown upload id: let the emulator answer
    }
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      if (range[1] === undefined) return incomplete(res, upload.size); // 'bytes */N' status query
      const first = Number(range[1]);
      const total = range[3] === '*' ? undefined : Number(range[3]);
      let body = Buffer.concat(parts);
      if (first > upload.size) return incomplete(res, upload.size); // a gap: client resends from what we have
      if (first < upload.size) body = body.subarray(upload.size - first); // already stored
      if (total === undefined || upload.size + body.length < total) {
        if (body.length > 0) uploads.continueResumableUpload(upload.id, body);
        return incomplete(res, upload.size);
      }
      req._body = true; // tells body parsers the body was read
      req.body = body;
      return handle(req, res, next); // last chunk: the emulator appends it and finalizes the object
    });
  };
}

async function main() {
  const started = Date.now();
  const emulator = new StorageEmulator({ projectId: PROJECT, host: '127.0.0.1', port, auto_download: false, rules: undefined });
  noRules(emulator);
  await EmulatorRegistry.start(emulator);
  chunkedUploads(emulator);
  bytesOnUse(emulator);
  const stop = () => {
    EmulatorRegistry.stop('storage').then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  console.log(`GCS emulator listening on http://127.0.0.1:${port} (${Date.now() - started} ms)`);
}

main().catch((err) => {
  console.error('GCS emulator failed to start:', err);
  process.exit(1);
});
