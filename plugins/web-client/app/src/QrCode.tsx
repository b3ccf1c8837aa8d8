/**
 * A QR code of a text (a share's link, a TOTP enrolment URI) as an SVG drawn
 * by React: no canvas, no data URL, nothing the Content-Security-Policy
 * would have to allow. The matrix comes from qrcode-generator, UTF-8
 * encoded, error correction M.
 */
import { useMemo } from 'react';
import { qrPath } from './qr';

/** `label` names the image for screen readers (for example "QR code of the share link"). */
export function QrCode({ text, label, pixels = 192 }: { text: string; label: string; pixels?: number }) {
  const { d, size } = useMemo(() => qrPath(text), [text]);
  const quiet = 4; // the quiet zone the standard asks for, in modules
  const side = size + 2 * quiet;
  return (
    <svg
      className="qr"
      role="img"
      aria-label={label}
      width={pixels}
      height={pixels}
      viewBox={`${-quiet} ${-quiet} ${side} ${side}`}
      shapeRendering="crispEdges"
    >
      <rect x={-quiet} y={-quiet} width={side} height={side} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}
