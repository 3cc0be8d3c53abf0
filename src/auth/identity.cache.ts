import { createHmac, randomBytes } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { Principal } from "./principal.ts";
import { safeEqual } from "./secrets.ts";

/**
 * Callers admitted lately, by credential, so that the next request with the same credential needs
 * no query and no password hashing. An entry is found only by the same credential (its keyed hash,
 * compared in constant time), lives a few seconds at most, and every entry of a user is dropped the
 * moment any process publishes that the user's credentials changed (a key revoked, the user
 * deactivated or changed, a password set, a membership changed): see src/auth/credential.events.ts.
 *
 * A lookup that started before an invalidation must not store what it read (the row as it was
 * before the change): every invalidation moves the generation on, and `remember` only stores a
 * lookup begun in the current generation.
 */
export interface IdentityCacheOptions {
  /** how long an entry may serve, in milliseconds; 0 disables the cache */
  ttlMs: number;
  /** how many credentials are remembered at most */
  max: number;
}

interface Entry {
  /** the credential's keyed hash, compared again on every hit */
  fingerprint: string;
  principal: Principal;
}

export class IdentityCache {
  /** keyed by a per-process secret, so that no plain hash of a password is ever held */
  private readonly key = randomBytes(32);
  private readonly entries: LRUCache<string, Entry> | undefined;
  private generation = 0;

  constructor(options: IdentityCacheOptions) {
    if (options.ttlMs > 0 && options.max > 0) this.entries = new LRUCache({ max: options.max, ttl: options.ttlMs, ttlAutopurge: false });
  }

  /** The credential's fingerprint: a keyed hash of the scheme and everything after it. */
  fingerprint(scheme: string, credential: string): string {
    return createHmac("sha256", this.key).update(`${scheme}\u0000${credential}`).digest("base64url");
  }

  /** The caller the same credential admitted lately, if no change of theirs was heard since. */
  find(fingerprint: string): Principal | undefined {
    const entry = this.entries?.get(fingerprint);
    return entry && safeEqual(entry.fingerprint, fingerprint) ? entry.principal : undefined;
  }

  /** Marks the start of a database lookup, for `remember`. */
  begin(): number {
    return this.generation;
  }

  /** Stores what a lookup begun at `generation` found, unless an invalidation came in between. */
  remember(generation: number, fingerprint: string, principal: Principal): void {
    if (!this.entries || generation !== this.generation) return;
    this.entries.set(fingerprint, { fingerprint, principal });
  }

  /** Drops every entry of the user (on every process: called for each "credentials changed" event). */
  forgetUser(userId: string): void {
    this.generation++;
    if (!this.entries) return;
    const theirs = [...this.entries.entries()].filter(([, entry]) => entry.principal.userId === userId);
    for (const [fingerprint] of theirs) this.entries.delete(fingerprint);
  }
}
