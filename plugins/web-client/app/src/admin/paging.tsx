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
export function PageSettings({ idPrefix, paging }: { idPrefix: string; paging: Paging }) {
  return (
    <>
      <label htmlFor={`${idPrefix}-order`}>{t.order}</label>
      <select id={`${idPrefix}-order`} value={paging.order} onChange={(e) => paging.setOrder(e.target.value as Order)}>
        <option value="ASC">{t.ascending}</option>
        <option value="DESC">{t.descending}</option>
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
    <div className="row pager">
      <button type="button" disabled={paging.offset === 0} onClick={() => paging.setOffset(Math.max(0, paging.offset - paging.limit))}>
        {t.previous}
      </button>
      <button type="button" disabled={!hasNext} onClick={() => paging.setOffset(paging.offset + paging.limit)}>
        {t.next}
      </button>
    </div>
  );
}
