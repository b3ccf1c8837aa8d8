/**
 * @ferry/fs-s3/lib: the half of the plugin that needs the AWS SDK. The
 * package entry (`@ferry/fs-s3`) imports this module only when the provider
 * first creates an Fs, so a server that never uses S3 never loads @aws-sdk/*.
 * Import it directly to build an S3Fs or an S3 client by hand (tests, tools).
 */
export { S3Fs } from './s3.fs.js';
export { createS3Client, s3ClientIdentity } from './s3-client.js';
