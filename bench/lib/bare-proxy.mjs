#!/usr/bin/env node
// A bare node:http proxy in front of a remote backend, the reference for
// "what one extra HTTP hop costs" in bench/remote-http.bench.mjs: no
// authentication, accounting or checks, the request body handed to the SDK
// as it is and the SDK's stream piped to the response.
//
//   node bench/lib/bare-proxy.mjs <port> <backend> <prefix>
//
//   POST /<name>  stores the body at <prefix>/<name> (s3: lib-storage Upload,
//                 azblob: uploadStream, both 5 MiB parts and 5 in flight;
//                 gcs: createWriteStream, resumable, 8 MiB chunks, crc32c)
//   GET  /<name>  streams it back (s3: GetObject, azblob: download(),
//                 gcs: createReadStream, crc32c checked)
//
// No SFTP: ssh2-sftp-client's stream put/get keep one request per chunk in
// flight, so a proxy built on them measures that library, not the hop.
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { S3, azContainer, gcsBucket, s3Client } from './backends.mjs';

const [port, backend, prefix] = process.argv.slice(2);
const MB = 1024 * 1024;

async function handlers() {
  if (backend === 's3') {
    const { GetObjectCommand } = await import('@aws-sdk/client-s3');
    const { Upload } = await import('@aws-sdk/lib-storage');
    const client = await s3Client();
    return {
      put: (name, body) => new Upload({ client, partSize: 5 * MB, queueSize: 5, params: { Bucket: S3.bucket, Key: `${prefix}/${name}`, Body: body } }).done(),
      get: async (name, res) => {
        const out = await client.send(new GetObjectCommand({ Bucket: S3.bucket, Key: `${prefix}/${name}` }));
        res.writeHead(200, { 'content-length': out.ContentLength });
        await pipeline(out.Body, res);
      },
    };
  }
  if (backend === 'azblob') {
    const container = await azContainer();
    return {
      put: (name, body) => container.getBlockBlobClient(`${prefix}/${name}`).uploadStream(body, 5 * MB, 5),
      get: async (name, res) => {
        const out = await container.getBlobClient(`${prefix}/${name}`).download();
        res.writeHead(200, { 'content-length': out.contentLength });
        await pipeline(out.readableStreamBody, res);
      },
    };
  }
  if (backend === 'gcs') {
    const bucket = await gcsBucket();
    return {
      put: (name, body) => pipeline(body, bucket.file(`${prefix}/${name}`).createWriteStream({ resumable: true, chunkSize: 8 * MB, validation: 'crc32c' })),
      get: async (name, res) => {
        const body = bucket.file(`${prefix}/${name}`).createReadStream({ validation: 'crc32c', decompress: false });
        // the length from the media answer's own headers: no metadata request
        body.once('response', (r) => res.writeHead(200, { 'content-length': r.headers['content-length'] }));
        await pipeline(body, res);
      },
    };
  }
  throw new Error(`unknown backend ${backend}`);
}

const h = await handlers();
http
  .createServer((req, res) => {
    const name = decodeURIComponent(req.url.slice(1));
    const fail = (err) => {
      console.error(`[bare-proxy] ${req.method} ${req.url}: ${err?.stack ?? err}`);
      if (res.headersSent) return res.destroy();
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err?.message ?? err));
    };
    if (req.method === 'POST') {
      h.put(name, req).then(() => {
        res.writeHead(201);
        res.end();
      }, fail);
    } else if (req.method === 'GET') {
      h.get(name, res).catch(fail);
    } else {
      res.writeHead(405);
      res.end();
    }
  })
  .listen(Number(port), '127.0.0.1');
