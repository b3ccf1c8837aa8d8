/** Folder and file icons as inline SVG (no font or emoji needed; decorative: hidden from screen readers). */
const PATHS = {
  folder: 'M3 5.5A1.5 1.5 0 0 1 4.5 4h4.38l2 2H19.5A1.5 1.5 0 0 1 21 7.5v11a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 18.5z',
  file: 'M6.5 2h7.38L19 7.12V20.5a1.5 1.5 0 0 1-1.5 1.5h-11A1.5 1.5 0 0 1 5 20.5v-17A1.5 1.5 0 0 1 6.5 2zM13 3.5V8h4.5',
  // the row actions on a phone (their names are the buttons' labels)
  eye: 'M2 12s3.5-7 10-7 10 7 10 7-3.5 7-10 7S2 12 2 12zM12 9a3 3 0 1 0 0 6a3 3 0 1 0 0-6z',
  pencil: 'M4 20h4L19 9l-4-4L4 16zM13.5 6.5l4 4',
  trash: 'M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13',
} as const;

export function Icon({ name }: { name: keyof typeof PATHS }) {
  return (
    <svg className={`icon icon-${name}`} viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
      <path d={PATHS[name]} />
    </svg>
  );
}
