import type { KeyValueCache, KeyValueCacheSetOptions } from "@apollo/utils.keyvaluecache";
import type { Prisma } from "./client.ts";

/** A document longer than this is run but not registered: a few such entries must not fill the table. */
const APQ_MAX_DOCUMENT_CHARS = 100_000;

export interface PersistedQueryLimits {
  /** how long an entry lives when Apollo names no TTL of its own */
  ttlSeconds: number;
  /** the newest this many entries are kept; registering one more drops the oldest */
  maxEntries: number;
}

/**
 * Apollo's automatic persisted queries (`persistedQueries.cache`) in the database, so a hash that one
 * process registered is found by every process of that database (an in-memory cache would make a
 * client re-send its document on each process it reaches). Bounded: entries expire, registering
 * prunes what expired and what is beyond the newest `maxEntries`, and long documents are not kept.
 */
export class PersistedQueryCache implements KeyValueCache<string> {
  constructor(
    private readonly prisma: Prisma,
    private readonly limits: PersistedQueryLimits,
  ) {}

  async get(key: string): Promise<string | undefined> {
    if (typeof key !== "string") return undefined;
    const entry = await this.prisma.persistedQuery.findUnique({ where: { hash: key } });
    return entry && entry.expiresAt > new Date() ? entry.document : undefined;
  }

  async set(key: string, document: string, options?: KeyValueCacheSetOptions): Promise<void> {
    if (document.length > APQ_MAX_DOCUMENT_CHARS) return;
    const expiresAt = new Date(Date.now() + (options?.ttl ?? this.limits.ttlSeconds) * 1000);
    // two processes may register one hash at once: the same document, the later expiry wins
    await this.prisma.persistedQuery.upsert({ where: { hash: key }, create: { hash: key, document, expiresAt }, update: { expiresAt } });
    await this.prune();
  }

  async delete(key: string): Promise<boolean> {
    const { count } = await this.prisma.persistedQuery.deleteMany({ where: { hash: key } });
    return count > 0;
  }

  /** Drops the expired entries and those beyond the newest `maxEntries`. */
  private async prune(): Promise<void> {
    await this.prisma.$executeRaw`
      DELETE FROM persisted_queries
      WHERE expires_at <= now()
         OR hash IN (SELECT hash FROM persisted_queries ORDER BY expires_at DESC, hash OFFSET ${this.limits.maxEntries})`;
  }
}
