/**
 * QR code matrices (qrcode-generator, UTF-8 encoded, error correction M),
 * as an SVG path for QrCode.tsx.
 */
import qrcode from 'qrcode-generator';

/** UTF-8 bytes as a string of one char per byte: what qrcode-generator's byte mode encodes (it keeps each char's low 8 bits). */
const utf8 = (text: string) => String.fromCharCode(...new TextEncoder().encode(text));

/** Whether each module of `text`'s QR code is dark, row by row. */
export function qrMatrix(text: string): boolean[][] {
  const qr = qrcode(0, 'M');
  qr.addData(utf8(text), 'Byte');
  qr.make();
  const size = qr.getModuleCount();
  return Array.from({ length: size }, (_, r) => Array.from({ length: size }, (_, c) => qr.isDark(r, c)));
}

/** The dark modules of `text`'s QR code as one SVG path (a 1-unit square each), and the side in modules. */
export function qrPath(text: string): { d: string; size: number } {
  const m = qrMatrix(text);
  const parts: string[] = [];
  m.forEach((row, r) => row.forEach((dark, c) => dark && parts.push(`M${c} ${r}h1v1h-1z`)));
  return { d: parts.join(''), size: m.length };
}
