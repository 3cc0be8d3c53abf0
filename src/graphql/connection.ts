import { createHash } from "node:crypto";
import type { ComplexityEstimator } from "graphql-query-complexity";
import { Field, Int, ObjectType, type ClassType } from "type-graphql";
import { badInput } from "../errors.ts";
import type { ListBound } from "./list-bounds.ts";

/**
 * Relay cursor connections (CONTRACT §7.3, the Relay cursor connection spec), for any list read in
 * a stable order by a unique sort key (a keyset). A feature supplies three things: the list's
 * fingerprint (its filter and order, so that a cursor brought to another list is refused), the
 * position of each row (its sort key, as strings), and a read of one slice of the list. This file
 * does the rest: the paging arguments and their rules, the cursors, `pageInfo`, the types and the
 * cost estimate.
 *
 * How a feature uses it:
 *   const cursors = new ListCursors(ListCursors.fingerprint({ filter, orderBy }));
 *   const slice = sliceOf(args, BOUND, (cursor, arg) => cursors.decode(cursor, arg, positionFromStrings));
 *   const read = await repository.slice(filter, slice);  // size + 1 rows in reading order, plus
 *                                                          // whether rows lie beyond after/before
 *   return connectionOf(pageOf(slice, read.rows, read.outside), read.total, toNode, (r) => cursors.encode(positionOf(r)));
 */

/** The paging arguments of a connection field, as the client gave them. */
export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** Page sizes of a connection: `defaultSize` when neither `first` nor `last` is given, at most `maxSize`. */
export interface ConnectionBound extends ListBound {
  /** the message for a `first`/`last` over maxSize (a feature may keep the wording of its REST face) */
  tooLarge?: string;
}

/**
 * The part of the list a page is: up to `size` rows strictly between `after` and `before` (either
 * bound may be absent), read from the start of that window (`first`) or from its end (`last`).
 */
export interface Slice<Position> {
  size: number;
  backward: boolean;
  after?: Position;
  before?: Position;
}

/** The slice the arguments ask for, or BAD_USER_INPUT. `readCursor` turns a cursor into a position (or throws BAD_USER_INPUT). */
export function sliceOf<Position>(
  args: ConnectionArgs,
  bound: ConnectionBound,
  readCursor: (cursor: string, argument: "after" | "before") => Position,
): Slice<Position> {
  const { first, last, after, before } = args;
  const given = (n: number | null | undefined): n is number => n !== undefined && n !== null;
  if (given(first) && given(last)) throw badInput("Pass either 'first' or 'last', not both.");
  const backward = given(last);
  const size = backward ? last : given(first) ? first : bound.defaultSize;
  const name = backward ? "last" : "first";
  if (!Number.isInteger(size) || size < 0) throw badInput(`'${name}' must not be negative.`);
  if (size > bound.maxSize) throw badInput(bound.tooLarge ?? `'${name}' must be at most ${bound.maxSize}.`);
  return {
    size,
    backward,
    after: after === undefined || after === null ? undefined : readCursor(after, "after"),
    before: before === undefined || before === null ? undefined : readCursor(before, "before"),
  };
}

/** The cost of a connection field: one, plus the page size asked for (capped at the maximum) times what each item selects. */
export function connectionCost(bound: ConnectionBound): ComplexityEstimator {
  return ({ args, childComplexity }) => {
    const size = Number(args.first ?? args.last ?? bound.defaultSize);
    return 1 + Math.min(Math.max(0, Number.isFinite(size) ? size : bound.maxSize), bound.maxSize) * childComplexity;
  };
}

/** The cursor layout; a cursor of another layout is refused as invalid. */
const CURSOR_VERSION = "1";

/** Stable JSON: object keys sorted, so that equal values fingerprint equally whatever their key order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Map) return canonical(Object.fromEntries(value));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/**
 * The cursors of one list (one filter, one order). A cursor holds the list's fingerprint and one
 * row's position, nothing else (not the page size: `first` and `last` are the client's on every
 * request). It is opaque but not secret: a hand-made position reads the same list the client may
 * read anyway, so each feature only checks that the position is well formed.
 */
export class ListCursors {
  constructor(private readonly list: string) {}

  /** The fingerprint of a list: what makes two requests read the same list (its filter and order). */
  static fingerprint(list: unknown): string {
    return createHash("sha256")
      .update(JSON.stringify(canonical(list)))
      .digest("base64url")
      .slice(0, 16);
  }

  encode(position: readonly string[]): string {
    return Buffer.from(JSON.stringify([CURSOR_VERSION, this.list, ...position])).toString("base64url");
  }

  /**
   * The position a cursor holds, as `read` makes it of the cursor's strings (undefined when they
   * are not a well-formed position), or BAD_USER_INPUT for a malformed cursor or one of another list.
   */
  decode<Position>(cursor: string, argument: "after" | "before", read: (position: string[]) => Position | undefined): Position {
    const invalid = () => badInput(`'${cursor.slice(0, 200)}' is not a valid cursor for '${argument}'.`);
    if (!/^[A-Za-z0-9_-]{1,2000}$/.test(cursor)) throw invalid();
    let parts: unknown;
    try {
      parts = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    } catch {
      throw invalid();
    }
    if (!Array.isArray(parts) || parts.length < 2 || !parts.every((p) => typeof p === "string") || parts[0] !== CURSOR_VERSION) {
      throw invalid();
    }
    // one spelling per cursor: base64 that decodes alike but was not written by encode() is refused
    if (Buffer.from(JSON.stringify(parts)).toString("base64url") !== cursor) throw invalid();
    if (parts[1] !== this.list) {
      throw badInput(
        `The cursor given as '${argument}' was made for another filter or order; page with the filter and order that made it, or start again without '${argument}'.`,
      );
    }
    const position = read(parts.slice(2) as string[]);
    if (position === undefined) throw invalid();
    return position;
  }
}

/** A page of the list: rows in list order, and whether rows of the list lie before its first and after its last. */
export interface Page<Row> {
  rows: Row[];
  hasPreviousPage: boolean;
  hasNextPage: boolean;
}

/** What lies outside the slice's window: rows at or before `after`, rows at or after `before` (each false when that bound is absent). */
export interface Outside {
  beforeAfter: boolean;
  afterBefore: boolean;
}

/**
 * The page from the rows read for a slice: up to `size + 1` rows in reading order (list order for
 * `first`, reversed for `last`). The flags are exact, not the Relay spec's "may": `hasPreviousPage`
 * is true exactly when a row of the list comes before the page's first edge (for `first` pages,
 * that is a row at or before `after`), `hasNextPage` exactly when one comes after its last edge.
 * On an empty page they say whether rows lie before / after the window.
 */
export function pageOf<Row>(slice: Slice<unknown>, read: Row[], outside: Outside): Page<Row> {
  const more = read.length > slice.size;
  const rows = read.slice(0, slice.size);
  if (slice.backward) rows.reverse();
  return slice.backward
    ? { rows, hasPreviousPage: more || outside.beforeAfter, hasNextPage: outside.afterBefore }
    : { rows, hasPreviousPage: outside.beforeAfter, hasNextPage: more || outside.afterBefore };
}

/** One edge: the node and the cursor of its position, made only when a client selects it. */
class EdgeValue<Node> {
  constructor(
    readonly node: Node,
    private readonly cursorOf: () => string,
  ) {}

  get cursor(): string {
    return this.cursorOf();
  }
}

interface PageInfoValue {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

export interface ConnectionValue<Node> {
  totalCount: number;
  edges: { node: Node; cursor: string }[];
  nodes: Node[];
  pageInfo: PageInfoValue;
}

/** The connection of a page: `totalCount` is everything the filter matches, whatever the page. */
export function connectionOf<Row, Node>(
  page: Page<Row>,
  totalCount: number,
  toNode: (row: Row) => Node,
  cursorOf: (row: Row) => string,
): ConnectionValue<Node> {
  const nodes = page.rows.map(toNode);
  const first = page.rows[0];
  const last = page.rows[page.rows.length - 1];
  return {
    totalCount,
    nodes,
    // made only when selected: a page of nodes alone (a pull) needs no edge objects
    get edges() {
      return nodes.map((node, i) => new EdgeValue(node, () => cursorOf(page.rows[i]!)));
    },
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      startCursor: first === undefined ? null : cursorOf(first),
      endCursor: last === undefined ? null : cursorOf(last),
    },
  };
}

// connections carry plain values (a page may hold 5,000 edges): graphql-js's default resolver reads
// their fields, not a type-graphql resolver per field
@ObjectType("PageInfo", {
  description: "Where a page of a connection stands in the whole list (Relay cursor connection spec).",
  simpleResolvers: true,
})
export class PageInfoType {
  @Field(() => Boolean, {
    description:
      "True exactly when the list has an item after this page's last edge (or, for an empty page, after its window): page on with `first` and `after: endCursor`.",
  })
  hasNextPage!: boolean;

  @Field(() => Boolean, {
    description:
      "True exactly when the list has an item before this page's first edge (also when paging forward with `after`): page back with `last` and `before: startCursor`.",
  })
  hasPreviousPage!: boolean;

  @Field(() => String, { nullable: true, description: "The cursor of the page's first edge; null when the page is empty." })
  startCursor!: string | null;

  @Field(() => String, { nullable: true, description: "The cursor of the page's last edge; null when the page is empty." })
  endCursor!: string | null;
}

/** How a connection's types are named and described: `Case` gives `CaseConnection` and `CaseEdge`. */
export interface ConnectionNames {
  /** the node type's name */
  type: string;
  /** the items, in the plural, for descriptions: "cases" */
  items: string;
  /** what `totalCount` counts */
  totalCount: string;
}

/** The `{type}Connection` and `{type}Edge` object types of a node type. */
export function connectionTypes<Node extends object>(nodeType: ClassType<Node>, names: ConnectionNames) {
  @ObjectType(`${names.type}Edge`, {
    description: `One of the ${names.items} of a page, with the cursor of its position in the list.`,
    simpleResolvers: true,
  })
  class EdgeType {
    @Field(() => String, {
      description:
        "This edge's own cursor (opaque): `after` it continues right after this edge, `before` it ends right before it. Valid only with the filter and order that made it.",
    })
    cursor!: string;

    @Field(() => nodeType, { description: `The ${names.type}.` })
    node!: Node;
  }

  @ObjectType(`${names.type}Connection`, {
    description: `A page of ${names.items} (Relay cursor connection): edges with their cursors, the nodes alone, and where the page stands.`,
    simpleResolvers: true,
  })
  class ConnectionType {
    @Field(() => Int, { description: names.totalCount })
    totalCount!: number;

    @Field(() => [EdgeType], { description: `The page's ${names.items}, each with its own cursor, in list order.` })
    edges!: EdgeType[];

    @Field(() => [nodeType], { description: `The page's ${names.items} without cursors, in list order (the same as edges' nodes).` })
    nodes!: Node[];

    @Field(() => PageInfoType, { description: "Whether more lie before and after this page, and the cursors of its ends." })
    pageInfo!: PageInfoType;
  }

  return { EdgeType, ConnectionType };
}
