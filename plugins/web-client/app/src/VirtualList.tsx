import { memo, useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { rowAfterKey } from './list-keys';

/**
 * One row: drawn again only when its item, its index or the render function change, so a scroll
 * step draws the rows that come into view and leaves the others alone.
 */
const Row = memo(function Row({ item, index, render }: { item: unknown; index: number; render: (item: never, index: number) => ReactNode }) {
  return <>{render(item as never, index)}</>;
});

/**
 * A list of fixed-height rows that renders only the rows in view (plus a few
 * around): a directory of 10,000+ entries stays as light as one of 50. The
 * spacer and offsets are set through the CSSOM (allowed by the CSP, unlike
 * style attributes in markup).
 *
 * Keyboard: the rows `render` draws carry `data-row={index}` and their main control (the one the
 * focus goes to) `data-primary`; with the focus in a row, the arrows, Page Up/Down, Home and End
 * move it to that control of another row, scrolled into view (drawn first when it was not).
 */
export function VirtualList<T>({
  items,
  rowHeight,
  render,
  overscan = 8,
  label,
}: {
  items: readonly T[];
  rowHeight: number;
  render: (item: T, index: number) => ReactNode;
  overscan?: number;
  label: string;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: 600 });
  /** The row the keyboard moved to before it was drawn: focused once it is. */
  const pendingFocus = useRef<number | null>(null);

  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const update = () => setView({ top: el.scrollTop, height: el.clientHeight });
    update();
    el.addEventListener('scroll', update, { passive: true });
    const ro = new ResizeObserver(update);
    ro.observe(el);
    return () => {
      el.removeEventListener('scroll', update);
      ro.disconnect();
    };
  }, []);

  const primaryOf = (i: number) => scroller.current?.querySelector<HTMLElement>(`[data-row="${i}"] [data-primary]`) ?? null;
  // in the commit that draws it: the focus never rests on the page between the old row and the new one
  useLayoutEffect(() => {
    if (pendingFocus.current === null) return;
    const target = primaryOf(pendingFocus.current);
    if (target) {
      pendingFocus.current = null;
      target.focus();
    }
  });

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const el = scroller.current;
    const from = (e.target as Element).closest('[data-row]');
    if (!el || !from) return;
    const to = rowAfterKey(e, Number(from.getAttribute('data-row')), items.length, Math.floor(el.clientHeight / rowHeight));
    if (to === null) return;
    e.preventDefault();
    const top = to * rowHeight;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = top + rowHeight - el.clientHeight;
    const target = primaryOf(to);
    if (target) target.focus();
    else pendingFocus.current = to;
  };

  const first = Math.max(0, Math.floor(view.top / rowHeight) - overscan);
  const last = Math.min(items.length, Math.ceil((view.top + view.height) / rowHeight) + overscan);
  const rows: ReactNode[] = [];
  for (let i = first; i < last; i++) rows.push(<Row key={i} item={items[i]} index={i} render={render} />);

  return (
    <div className="scroller" ref={scroller} tabIndex={-1} aria-label={label} role="rowgroup" onKeyDown={onKeyDown}>
      <div className="spacer" style={{ height: items.length * rowHeight }}>
        <div className="window" style={{ transform: `translateY(${first * rowHeight}px)` }}>
          {rows}
        </div>
      </div>
    </div>
  );
}
