/** Folder and file icons as inline SVG (no font or emoji needed; decorative: hidden from screen readers). */
const PATHS = {
  folder: 'M3 5.5A1.5 1.5 0 0 1 4.5 4h4.38l2 2H19.5A1.5 1.5 0 0 1 21 7.5v11a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 18.5z',
  file: 'M6.5 2h7.38L19 7.12V20.5a1.5 1.5 0 0 1-1.5 1.5h-11A1.5 1.5 0 0 1 5 20.5v-17A1.5 1.5 0 0 1 6.5 2zM13 3.5V8h4.5',
} as const;

export function Icon({ name }: { name: keyof typeof PATHS }) {
  return (
    <svg className={`icon icon-${name}`} viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
      <path d={PATHS[name]} />
    </svg>
  );
}
