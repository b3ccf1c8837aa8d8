export { ZipWriter, ONE_SHOT_MAX, type EntryOptions, type StreamEntryOptions, type ZipWriterOptions } from './zip-writer.js';
export { crc32, crc32js } from '@ferry/crc';
export { fillZip } from './fill-zip.js';
