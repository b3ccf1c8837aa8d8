/** The keyboard of the file list (pure: unit-tested under node). */

/** The keys a list moves the focus with, as the key event has them. */
export interface KeyPress {
  key: string;
  altKey?: boolean;
  ctrlKey?: boolean;
  metaKey?: boolean;
  shiftKey?: boolean;
}

/**
 * The row the focus goes to from row `index` of `count` rows for a key (a page is `pageRows`
 * rows): arrows one row, Page Up/Down a page, Home/End the ends; null for any other key (and
 * for Alt+Up, which goes up a folder).
 */
export function rowAfterKey(k: KeyPress, index: number, count: number, pageRows: number): number | null {
  if (count === 0 || k.altKey || k.ctrlKey || k.metaKey) return null;
  const last = count - 1;
  const clamp = (i: number) => Math.max(0, Math.min(last, i));
  switch (k.key) {
    case 'ArrowDown':
      return clamp(index + 1);
    case 'ArrowUp':
      return clamp(index - 1);
    case 'PageDown':
      return clamp(index + Math.max(1, pageRows));
    case 'PageUp':
      return clamp(index - Math.max(1, pageRows));
    case 'Home':
      return 0;
    case 'End':
      return last;
    default:
      return null;
  }
}

/** What a key does to the folder of the file list: up to its parent (Backspace, Alt+Up), or delete the focused entry (Delete). */
export function folderKey(k: KeyPress): 'parent' | 'delete' | null {
  if (k.ctrlKey || k.metaKey || k.shiftKey) return null;
  if ((k.key === 'Backspace' && !k.altKey) || (k.key === 'ArrowUp' && k.altKey)) return 'parent';
  if (k.key === 'Delete' && !k.altKey) return 'delete';
  return null;
}

/** True when a key pressed in `el` is the field's own (typing in a text field, a select): the list leaves it alone. */
export function isEditable(el: Element | null): boolean {
  if (!el) return false;
  const tag = el.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') return !['checkbox', 'radio', 'button', 'submit', 'reset', 'file'].includes((el as HTMLInputElement).type);
  return (el as HTMLElement).isContentEditable === true;
}
