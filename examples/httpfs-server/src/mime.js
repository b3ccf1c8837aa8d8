/**
 * A small extension → MIME type table for the `mimetype` route. A real
 * server may sniff content instead; the protocol only asks for a string.
 */
/** @type {Record<string, string>} */
const TYPES = {
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.htm': 'text/html',
  '.html': 'text/html',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.md': 'text/markdown',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
  '.7z': 'application/x-7z-compressed',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.mp3': 'audio/mpeg',
  '.mp4': 'video/mp4',
  '.doc': 'application/msword',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xls': 'application/vnd.ms-excel',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** Type reported for directories (the same value SFTPGo uses). */
export const DIRECTORY_MIME = 'inode/directory';

/**
 * @param {string} name a file name or path
 * @returns {string}
 */
export function mimeTypeOf(name) {
  const dot = name.lastIndexOf('.');
  const ext = dot > name.lastIndexOf('/') ? name.slice(dot).toLowerCase() : '';
  return TYPES[ext] ?? 'application/octet-stream';
}
