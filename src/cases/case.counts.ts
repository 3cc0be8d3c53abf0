/**
 * Exact counts of the case list, remembered per count statement for one write version of its domain.
 *
 * Every transaction that writes `cases` or `case_indices` bumps `case_write_versions.version` of the
 * domains it touched, once each (a row trigger, prisma/migrations/…_case_write_versions_row_triggers), and
 * writers of one domain commit in version order. So a count read in the same statement as version v
 * is the count of every snapshot that reads v, on any process: a list that reads v again is answered
 * from here instead of visiting every match (at a million cases, the whole heap) on each request.
 */

import { LRUCache } from "lru-cache";

/** How many counts one process keeps (least recently used first out): small rows, a few filters per dashboard. */
const CAPACITY = 1000;

export class CountCache<T> {
  private readonly entries: LRUCache<string, { version: string; value: T }>;

  constructor(capacity = CAPACITY) {
    this.entries = new LRUCache({ max: capacity });
  }

  /** The count for `key` if it was read at `version`. */
  get(key: string, version: string | undefined): T | undefined {
    const entry = this.entries.get(key);
    return entry && version !== undefined && entry.version === version ? entry.value : undefined;
  }

  set(key: string, version: string, value: T): void {
    this.entries.set(key, { version, value });
  }
}

/** A count statement's identity: its SQL text and its parameters. */
export function statementKey(statement: { sql: string; values: unknown[] }): string {
  return `${statement.sql}\u0000${JSON.stringify(statement.values)}`;
}
