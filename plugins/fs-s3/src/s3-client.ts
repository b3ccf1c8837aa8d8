import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@aws-sdk/types';
import type { S3Settings } from './config.schema.js';
import { DEFAULT_S3_TIMEOUTS, type S3Timeouts } from './constants.js';
import { sharedSocketReads } from './socket-reads.js';

/** Renew assumed-role credentials this long before they expire. */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;

/**
 * Builds the S3 client for one Fs. Checksums are computed and validated only
 * when an operation requires them ('WHEN_REQUIRED'): with the SDK default a
 * streamed PutObject body is sent aws-chunked with a trailer, which some
 * S3-compatible servers (s3rver) store verbatim, corrupting the object.
 * Every request has a connection timeout and a socket inactivity timeout
 * (the SDK sets neither by default, so a server that stops answering would
 * hang a transfer forever). The sockets of the SDK's agents (given as
 * options, so the SDK keeps its own agent handling: keep-alive, 50 sockets)
 * read into a buffer shared by the process (socket-reads.ts).
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
  if (s.roleArn) config.credentials = assumeRoleProvider(s, base, sessionName, requestHandler);
  else if (base) config.credentials = base;
  // else: the SDK's default chain (environment, shared config, instance role).
  return new S3Client(config);
}

/**
 * Credentials of `role_arn`, assumed through STS with the static keys (or the
 * default chain) and renewed shortly before they expire.
 */
function assumeRoleProvider(
  s: S3Settings,
  base: AwsCredentialIdentity | undefined,
  sessionName: string,
  requestHandler: S3ClientConfig['requestHandler'],
): AwsCredentialIdentityProvider {
  // the STS endpoint: the SDK's own resolution (AWS_ENDPOINT_URL_STS or the regional one)
  const sts = new STSClient({ region: s.region, requestHandler, maxAttempts: 3, ...(base ? { credentials: base } : {}) });
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
