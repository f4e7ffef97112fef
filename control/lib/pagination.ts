/** Paging for list services; the rule itself (limits, the query schema, PageOf) lives in core/schemas/common. */
export interface Page<T> {
  data: T[];
  limit: number;
  offset: number;
  has_more: boolean;
}

/** Query limit+1 rows, then call this to trim and compute has_more. */
export function pageOf<T>(rows: T[], limit: number, offset: number): Page<T> {
  return { data: rows.slice(0, limit), limit, offset, has_more: rows.length > limit };
}
