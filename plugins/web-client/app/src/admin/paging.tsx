/**
 * A list read from the server a page at a time (limit, offset, order: a list
 * of 100,000 is never loaded whole): the state, its controls and the pager.
 */
import { useState } from 'react';
import { t } from './strings';

export const PAGE_SIZES = [25, 50, 100];
export type Order = 'ASC' | 'DESC';

export interface Paging {
  offset: number;
  limit: number;
  order: Order;
  setOffset: (offset: number) => void;
  /** A new page size or order starts again from the first page. */
  setLimit: (limit: number) => void;
  setOrder: (order: Order) => void;
  /** The query of a page: one more than the page, to know whether a next one exists without counting them all. */
  query: { limit: number; offset: number; order: Order };
}

export function usePaging(): Paging {
  const [offset, setOffset] = useState(0);
  const [limit, setLimitState] = useState(PAGE_SIZES[0]!);
  const [order, setOrderState] = useState<Order>('ASC');
  return {
    offset,
    limit,
    order,
    setOffset,
    setLimit: (n) => {
      setLimitState(n);
      setOffset(0);
    },
    setOrder: (o) => {
      setOrderState(o);
      setOffset(0);
    },
    query: { limit: limit + 1, offset, order },
  };
}

/** The rows of a page read with `paging.query`, and whether there is a next page. */
export function pageOf<T>(data: T[], limit: number): { rows: T[]; hasNext: boolean } {
  return { rows: data.slice(0, limit), hasNext: data.length > limit };
}

/** The order and page size controls (inside the list's toolbar). */
export function PageSettings({
  idPrefix,
  paging,
  orderLabels = [t.ascending, t.descending],
}: {
  idPrefix: string;
  paging: Pick<Paging, 'order' | 'limit' | 'setOrder' | 'setLimit'>;
  /** The names of the ascending and descending orders (A to Z by default). */
  orderLabels?: [string, string];
}) {
  return (
    <>
      <label htmlFor={`${idPrefix}-order`}>{t.order}</label>
      <select id={`${idPrefix}-order`} value={paging.order} onChange={(e) => paging.setOrder(e.target.value as Order)}>
        <option value="ASC">{orderLabels[0]}</option>
        <option value="DESC">{orderLabels[1]}</option>
      </select>
      <label htmlFor={`${idPrefix}-limit`}>{t.perPage}</label>
      <select id={`${idPrefix}-limit`} value={paging.limit} onChange={(e) => paging.setLimit(Number(e.target.value))}>
        {PAGE_SIZES.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    </>
  );
}

export function Pager({ paging, hasNext }: { paging: Paging; hasNext: boolean }) {
  return (
    <PagerButtons
      hasPrevious={paging.offset > 0}
      hasNext={hasNext}
      onPrevious={() => paging.setOffset(Math.max(0, paging.offset - paging.limit))}
      onNext={() => paging.setOffset(paging.offset + paging.limit)}
    />
  );
}

function PagerButtons(p: { hasPrevious: boolean; hasNext: boolean; onPrevious: () => void; onNext: () => void }) {
  return (
    <div className="row pager">
      <button type="button" disabled={!p.hasPrevious} onClick={p.onPrevious}>
        {t.previous}
      </button>
      <button type="button" disabled={!p.hasNext} onClick={p.onNext}>
        {t.next}
      </button>
    </div>
  );
}

/**
 * A list the server pages by a cursor (the last row's key: rows strictly
 * after it), as the IP lists (`from`) and the event search (`from_id`) do:
 * the cursors of the pages before the current one are kept to go back.
 */
export interface CursorPaging {
  /** The current page's cursor ('' for the first page). */
  cursor: string;
  limit: number;
  order: Order;
  setLimit: (limit: number) => void;
  setOrder: (order: Order) => void;
  /** Back to the first page (after a new filter). */
  reset: () => void;
  next: (lastKey: string) => void;
  previous: () => void;
  hasPrevious: boolean;
  /** A page of one more than `limit` rows: whether there is a next page. */
  queryLimit: number;
}

export function useCursorPaging(initialOrder: Order = 'ASC'): CursorPaging {
  const [stack, setStack] = useState<string[]>([]);
  const [cursor, setCursor] = useState('');
  const [limit, setLimitState] = useState(PAGE_SIZES[0]!);
  const [order, setOrderState] = useState<Order>(initialOrder);
  const reset = () => {
    setStack([]);
    setCursor('');
  };
  return {
    cursor,
    limit,
    order,
    setLimit: (n) => {
      setLimitState(n);
      reset();
    },
    setOrder: (o) => {
      setOrderState(o);
      reset();
    },
    reset,
    next: (lastKey) => {
      setStack([...stack, cursor]);
      setCursor(lastKey);
    },
    previous: () => {
      setCursor(stack[stack.length - 1] ?? '');
      setStack(stack.slice(0, -1));
    },
    hasPrevious: stack.length > 0,
    queryLimit: limit + 1,
  };
}

/** Previous/next of a cursor-paged list; `lastKey` is the cursor of the page's last row. */
export function CursorPager({ paging, hasNext, lastKey }: { paging: CursorPaging; hasNext: boolean; lastKey: string }) {
  return <PagerButtons hasPrevious={paging.hasPrevious} hasNext={hasNext} onPrevious={paging.previous} onNext={() => paging.next(lastKey)} />;
}
