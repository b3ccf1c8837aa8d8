/** Which files the preview dialog shows, and how (by the name's extension: pure, unit-tested). */
export type PreviewKind = 'image' | 'text' | 'pdf' | 'audio' | 'video';

const KINDS: Record<string, PreviewKind> = {};
const add = (kind: PreviewKind, exts: string) => exts.split(' ').forEach((e) => (KINDS[e] = kind));
add('image', 'png jpg jpeg gif webp avif bmp ico svg');
add('audio', 'mp3 wav ogg oga opus flac m4a aac weba');
add('video', 'mp4 m4v webm ogv mov');
add('pdf', 'pdf');
add(
  'text',
  'txt text md markdown csv tsv log json jsonl xml yaml yml toml ini conf cfg env sh bash zsh py rb js mjs cjs ts tsx jsx css scss html htm c h cc cpp hpp rs go java kt swift php pl sql diff patch',
);

/** The preview kind of a file name, or null when the browser cannot show it. */
export function previewKind(name: string): PreviewKind | null {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return /^(readme|license|makefile|dockerfile|changelog)$/i.test(name) ? 'text' : null;
  return KINDS[name.slice(dot + 1).toLowerCase()] ?? null;
}

/** How much of a text file the preview reads (a Range request): the first 64 KiB. */
export const TEXT_PREVIEW_BYTES = 64 * 1024;

/**
 * The text of the first bytes of a file, as UTF-8 (invalid sequences
 * replaced), and whether the file goes on beyond them. A multi-byte
 * character cut at the end is dropped rather than shown as garbage.
 */
export function textPreview(bytes: Uint8Array, total: number): { text: string; truncated: boolean } {
  const truncated = total > bytes.length;
  let end = bytes.length;
  if (truncated) {
    // back up over a cut UTF-8 sequence (continuation bytes 10xxxxxx and their lead byte)
    let i = end - 1;
    while (i >= 0 && i > end - 4 && (bytes[i]! & 0xc0) === 0x80) i--;
    if (i >= 0 && bytes[i]! >= 0xc0) {
      const need = bytes[i]! >= 0xf0 ? 4 : bytes[i]! >= 0xe0 ? 3 : 2;
      if (end - i < need) end = i;
    }
  }
  return { text: new TextDecoder('utf-8').decode(bytes.subarray(0, end)), truncated };
}
