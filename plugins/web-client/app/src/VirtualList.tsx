import { memo, useEffect, useRef, useState, type ReactNode } from 'react';

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

  const first = Math.max(0, Math.floor(view.top / rowHeight) - overscan);
  const last = Math.min(items.length, Math.ceil((view.top + view.height) / rowHeight) + overscan);
  const rows: ReactNode[] = [];
  for (let i = first; i < last; i++) rows.push(<Row key={i} item={items[i]} index={i} render={render} />);

  return (
    <div className="scroller" ref={scroller} tabIndex={-1} aria-label={label} role="rowgroup">
      <div className="spacer" style={{ height: items.length * rowHeight }}>
        <div className="window" style={{ transform: `translateY(${first * rowHeight}px)` }}>
          {rows}
        </div>
      </div>
    </div>
  );
}
