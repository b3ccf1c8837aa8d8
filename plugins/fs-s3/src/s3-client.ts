import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@aws-sdk/types';
import type { S3Settings } from './config.schema.js';
import { DEFAULT_S3_TIMEOUTS, type S3Timeouts } from './constants.js';
import { sharedSocketReads } from './socket-reads.js';

/** Renew assumed-role credentials this long before they expire. */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;

/**
 * What makes two clients of createS3Client() differ, for the provider's
 * ClientCache: every input it reads (endpoint, region, path style, static
 * keys, role and its session name, time limits). The bucket, key prefix,
 * SSE-C key, storage class, ACL and part sizes are parameters of each
 * request, held by the S3Fs: Fs of the same identity share one client. The
 * session name (per user) counts only with a role: without one, no request
 * carries it.
 */
export function s3ClientIdentity(s: S3Settings, sessionName: string, timeouts: S3Timeouts = DEFAULT_S3_TIMEOUTS): unknown[] {
  return [
    s.endpoint ?? '',
    s.region,
    s.forcePathStyle,
    s.accessKey,
    s.accessSecret,
    s.sessionToken,
    s.roleArn,
    s.roleArn ? sessionName : '',
    timeouts.connectTimeoutMs,
    timeouts.idleTimeoutMs,
  ];
}

/**
 * Builds an S3 client, shared by the Fs of one identity (the provider's
 * ClientCache, see s3ClientIdentity()). Checksums are computed and validated only
 * when an operation requires them ('WHEN_REQUIRED'): with the SDK default a
 * streamed PutObject body is sent aws-chunked with a trailer, which some
 * S3-compatible servers (s3rver) store verbatim, corrupting the object.
 * Every request has a connection timeout and a socket inactivity timeout
 * (the SDK sets neither by default, so a server that stops answering would
 * hang a transfer forever). The sockets of the SDK's agents (given as
 * options, so the SDK keeps its own agent handling: keep-alive, 50 sockets)
 * read into a buffer shared by the process (socket-reads.ts).
 *
 * Every input is part of s3ClientIdentity(): keep both in step. destroy()
 * also frees the STS client of a `role_arn`.
 */
export function createS3Client(s: S3Settings, sessionName: string, timeouts: S3Timeouts = DEFAULT_S3_TIMEOUTS): S3Client {
  const requestHandler = {
    connectionTimeout: timeouts.connectTimeoutMs,
    socketTimeout: timeouts.idleTimeoutMs,
    httpAgent: { onread: sharedSocketReads() },
    httpsAgent: { onread: sharedSocketReads() },
  };
  const base: AwsCredentialIdentity | undefined = s.accessKey
    ? {
        accessKeyId: s.accessKey,
        secretAccessKey: s.accessSecret,
        ...(s.sessionToken ? { sessionToken: s.sessionToken } : {}),
      }
    : undefined;
  const config: S3ClientConfig = {
    region: s.region,
    forcePathStyle: s.forcePathStyle,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
    requestHandler,
    ...(s.endpoint ? { endpoint: s.endpoint } : {}),
  };
  // the STS endpoint: the SDK's own resolution (AWS_ENDPOINT_URL_STS or the regional one)
  const sts = s.roleArn ? new STSClient({ region: s.region, requestHandler, maxAttempts: 3, ...(base ? { credentials: base } : {}) }) : undefined;
  if (sts) config.credentials = assumeRoleProvider(s, sts, sessionName);
  else if (base) config.credentials = base;
  // else: the SDK's default chain (environment, shared config, instance role).
  const client = new S3Client(config);
  if (sts) {
    const destroyS3 = client.destroy.bind(client);
    client.destroy = () => {
      destroyS3();
      sts.destroy();
    };
  }
  return client;
}

/**
 * Credentials of `role_arn`, assumed through `sts` (signed with the static
 * keys or the default chain) and renewed shortly before they expire.
 */
function assumeRoleProvider(s: S3Settings, sts: STSClient, sessionName: string): AwsCredentialIdentityProvider {
  let current: AwsCredentialIdentity | undefined;
  let pending: Promise<AwsCredentialIdentity> | undefined;
  const fetch = async (): Promise<AwsCredentialIdentity> => {
    const out = await sts.send(new AssumeRoleCommand({ RoleArn: s.roleArn, RoleSessionName: sessionName, DurationSeconds: 3600 }));
    const c = out.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey) throw new Error(`STS AssumeRole ${s.roleArn} returned no credentials`);
    return {
      accessKeyId: c.AccessKeyId,
      secretAccessKey: c.SecretAccessKey,
      sessionToken: c.SessionToken,
      expiration: c.Expiration,
    };
  };
  return async () => {
    const fresh = current?.expiration && current.expiration.getTime() - Date.now() > REFRESH_MARGIN_MS;
    if (current && fresh) return current;
    pending ??= fetch().finally(() => (pending = undefined));
    current = await pending;
    return current;
  };
}
