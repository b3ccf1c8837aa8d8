export { crc32, crc32js, crc32c, slicingBy8, type Crc32Function } from './crc32.js';
