import { Prisma } from "../generated/prisma/client.ts";
import type { CaseOrder, OrderField, Position } from "./case.query.ts";

/**
 * A case list's order in SQL, for the case repository: its ORDER BY, each case's position in it,
 * and the keyset conditions that cut a window out of it. Each order is read from an index that
 * leads with domain_id, then the column, then id (prisma/schema.prisma), so a page costs its own
 * rows whatever its depth.
 *
 * A column that may be empty (date_closed) puts the cases without a value last in both directions.
 * A row comparison `(col, id) > (v, i)` is false for them, so a window is one or two *segments*:
 * the cases with a value (bounded by row comparisons) and those without (bounded by id). Each
 * segment is one range of the index; a window of two is read as two ranges, never as an OR that
 * the index could only filter.
 */

const { sql, join, raw } = Prisma;

interface OrderColumn {
  type: "timestamptz" | "text";
  nullable: boolean;
}

const COLUMNS: Record<OrderField, OrderColumn> = {
  indexed_on: { type: "timestamptz", nullable: false },
  last_modified: { type: "timestamptz", nullable: false },
  server_last_modified: { type: "timestamptz", nullable: false },
  date_opened: { type: "timestamptz", nullable: false },
  date_closed: { type: "timestamptz", nullable: true },
  case_name: { type: "text", nullable: false },
};

/** Where a case stands against a position, in list order: after it, at or after it, before it, at or before it. */
export type Relation = ">" | ">=" | "<" | "<=";

const REVERSED: Record<Relation, Relation> = { ">": "<", ">=": "<=", "<": ">", "<=": ">=" };

/** One range of the list: the cases with a value, or those without, within `bounds`. */
export interface Segment {
  empty: boolean;
  bounds: Prisma.Sql[];
}

export class ListOrder {
  private readonly column: OrderColumn;
  private readonly name: Prisma.Sql;

  constructor(readonly order: CaseOrder) {
    this.column = COLUMNS[order.field];
    this.name = raw(`c.${order.field}`);
  }

  /** The ORDER BY terms, in list order or reversed (a backward read). */
  orderBy(reversed: boolean): Prisma.Sql {
    const descending = (this.order.direction === "desc") !== reversed;
    const direction = descending ? "DESC" : "ASC";
    // the cases without a value come last in list order, so first when it is read reversed
    const nulls = this.column.nullable ? (reversed ? " NULLS FIRST" : " NULLS LAST") : "";
    return raw(`c.${this.order.field} ${direction}${nulls}, c.id ${direction}`);
  }

  /** A case's value of the column as text at full precision (microseconds for a time): its position with its id. */
  get key(): Prisma.Sql {
    return this.column.type === "timestamptz" ? sql`to_char(${this.name} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')` : this.name;
  }

  /** The whole list. */
  all(): Segment[] {
    return this.column.nullable
      ? [
          { empty: false, bounds: [] },
          { empty: true, bounds: [] },
        ]
      : [{ empty: false, bounds: [] }];
  }

  /** The cases that stand in `relation` to `at` in list order, as disjoint segments. */
  standing(relation: Relation, at: Position): Segment[] {
    // the row comparisons run in the column's direction: after, in a descending list, is below
    const op = raw(this.order.direction === "asc" ? relation : REVERSED[relation]);
    const later = relation === ">" || relation === ">=";
    if (at.value !== null) {
      const valued = { empty: false, bounds: [sql`(${this.name}, c.id) ${op} (${at.value}::${raw(this.column.type)}, ${at.caseId}::uuid)`] };
      // the cases without a value all come after any with one
      return later && this.column.nullable ? [valued, { empty: true, bounds: [] }] : [valued];
    }
    const unvalued = { empty: true, bounds: [sql`c.id ${op} ${at.caseId}::uuid`] };
    return later ? [unvalued] : [{ empty: false, bounds: [] }, unvalued];
  }

  /** The cases strictly after `after` and strictly before `before` (either may be absent). */
  window(bounds: { after?: Position; before?: Position }): Segment[] {
    let segments = this.all();
    if (bounds.after) segments = intersect(segments, this.standing(">", bounds.after));
    if (bounds.before) segments = intersect(segments, this.standing("<", bounds.before));
    return segments;
  }

  /** A segment as a condition on `c`. */
  private condition(segment: Segment): Prisma.Sql {
    const parts = this.column.nullable ? [segment.empty ? sql`${this.name} IS NULL` : sql`${this.name} IS NOT NULL`] : [];
    parts.push(...segment.bounds);
    return parts.length ? join(parts, " AND ") : sql`TRUE`;
  }

  /**
   * The index ranges to read for a window: one condition per segment, or one for the whole list
   * (whose ORDER BY alone is one range of the index, cases without a value at its end).
   */
  ranges(segments: Segment[]): Prisma.Sql[] {
    return this.isWhole(segments) ? [sql`TRUE`] : segments.map((s) => this.condition(s));
  }

  /** Segments as one condition (for counts, which read every match anyway). */
  predicate(segments: Segment[]): Prisma.Sql {
    const conditions = this.ranges(segments);
    if (!conditions.length) return sql`FALSE`;
    return conditions.length === 1 ? conditions[0]! : sql`(${join(conditions, " OR ")})`;
  }

  private isWhole(segments: Segment[]): boolean {
    return segments.length === this.all().length && segments.every((s) => s.bounds.length === 0);
  }
}

/** The segments both lists hold: the same kind of case within both bounds. */
function intersect(a: Segment[], b: Segment[]): Segment[] {
  return a.flatMap((x) => b.filter((y) => y.empty === x.empty).map((y) => ({ empty: x.empty, bounds: [...x.bounds, ...y.bounds] })));
}
