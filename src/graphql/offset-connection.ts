import { ListCursors, connectionOf, sliceOf, type ConnectionArgs, type ConnectionBound, type ConnectionValue } from "./connection.ts";

/**
 * Relay connections (connection.ts) over a list read by position (OFFSET) rather than by a unique
 * sort key: each edge's cursor holds the list's fingerprint and the edge's own position. The price
 * of needing no sort key: a row inserted or deleted before a client's position while it pages
 * shifts the rows after it by one, so one row may be seen twice or skipped.
 */

/** How a list is read by position: the rows of a window with the count of all, or the count alone. */
export interface PositionedList<Row> {
  slice(offset: number, limit: number): Promise<{ rows: Row[]; total: number }>;
  count(): Promise<number>;
}

/** Positions stay far below 2^53, so that a position plus a page size is still exact. */
const MAX_POSITION = 2 ** 50;

/** The position a cursor's strings hold, or undefined when they are not one. */
function positionOf(parts: string[]): number | undefined {
  const position = parts.length === 1 && /^\d{1,16}$/.test(parts[0]!) ? Number(parts[0]) : Number.NaN;
  return position <= MAX_POSITION ? position : undefined;
}

/**
 * One page of the list as the Relay spec cuts it: the rows strictly between the `after` and
 * `before` edges, the first `first` of them or the last `last`. `totalCount` is the whole list on
 * every page; `hasPreviousPage`/`hasNextPage` say whether rows lie before/after the page.
 * `definition` is what makes the list (its domain, filter and order): a cursor of another is refused.
 */
export async function offsetConnection<Row, Node>(
  args: ConnectionArgs,
  bound: ConnectionBound,
  definition: unknown,
  list: PositionedList<Row>,
  toNode: (row: Row) => Node,
): Promise<ConnectionValue<Node>> {
  const cursors = new ListCursors(ListCursors.fingerprint(definition));
  const slice = sliceOf(args, bound, (cursor, argument) => cursors.decode(cursor, argument, positionOf));
  let start = slice.after === undefined ? 0 : slice.after + 1;
  let end = slice.before === undefined ? undefined : Math.max(slice.before, start);
  let total: number | undefined;
  if (slice.backward) {
    // `last` without `before` counts back from the end of the list, which only the count knows
    if (end === undefined) {
      total = await list.count();
      end = Math.max(total, start);
    }
    start = Math.max(start, end - slice.size);
  } else {
    end = Math.min(end ?? Number.POSITIVE_INFINITY, start + slice.size);
  }
  let rows: Row[] = [];
  if (end > start) ({ rows, total } = await list.slice(start, end - start));
  total ??= await list.count();
  const positioned = rows.map((row, i) => ({ row, position: start + i }));
  const page = { rows: positioned, hasPreviousPage: Math.min(start, total) > 0, hasNextPage: start + rows.length < total };
  return connectionOf(
    page,
    total,
    ({ row }) => toNode(row),
    ({ position }) => cursors.encode([String(position)]),
  );
}
