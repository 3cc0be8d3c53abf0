import { getOrCreate } from "../util/maps.ts";
import { GraphQLError } from "graphql";
import type { WebSocket } from "ws";
import type { Admission } from "../admission/admission.ts";
import type { Standing } from "../auth/authenticate.ts";
import type { Principal } from "../auth/principal.ts";
import { DomainError } from "../errors.ts";
import { log } from "../log.ts";
import { graphqlSubscriptionsActive } from "../observability/metrics.ts";
import type { ConnectionLog } from "../observability/websocket-log.ts";

/**
 * The open WebSockets of this process, by user: what each was admitted as, the permissions it last
 * saw in each domain, and its live subscriptions (which hold the per-socket and per-user slots of
 * WS_MAX_SUBSCRIPTIONS_*).
 *
 * A socket stands while its credential does. It is re-checked on each subscribe message, when a
 * "credentials changed" event names its user (from any process), every WS_RECHECK_SECONDS, and an
 * access token's socket (OAuth, OpenID Connect) at the token's expiry. When the credential, the user or the superuser flag
 * is gone, or the permissions change in a domain that one of its live subscriptions names, the
 * socket is closed with 4403 Forbidden: its subscriptions end, and a client reconnects with
 * credentials that stand (graphql-ws retries after 4403, re-reading `connectionParams`).
 */

/** graphql-ws's code for a refused connection: the one code for "your credentials no longer stand". */
const FORBIDDEN_CLOSE = 4403;

/** One live subscription: the subscribe message's payload (ids may be reused) and the domains it names. */
interface LiveSubscription {
  payload: object;
  domains: readonly string[];
}

export interface Session {
  readonly socket: WebSocket;
  readonly principal: Principal;
  /** the connection's log lines */
  readonly log: ConnectionLog;
  /** permissions per domain as last re-checked, to tell a change of those that live subscriptions rely on */
  grants: ReadonlyMap<string, readonly string[]>;
  readonly live: Map<string, LiveSubscription>;
  closed: boolean;
  /** re-checks may overlap: only a newer one's findings replace `grants` */
  started: number;
  applied: number;
  expiry?: NodeJS.Timeout;
}

export interface SessionLimits {
  perSocket: number;
  perUser: number;
}

/** the reason of a socket closed at its OAuth token's expiry: routine, unlike a revocation */
const TOKEN_EXPIRED = "access token expired";

/** setTimeout's longest delay; a later expiry is re-armed when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const samePermissions = (a: readonly string[] = [], b: readonly string[] = []) => a.length === b.length && a.every((p, i) => p === b[i]);

export class WsSessions {
  private readonly byUser = new Map<string, Set<Session>>();
  /** live subscriptions per user on this process */
  private readonly liveByUser = new Map<string, number>();

  constructor(
    private readonly admission: Admission,
    private readonly limits: SessionLimits,
  ) {}

  /** Registers an admitted socket (not one that closed while it was being admitted). */
  open(socket: WebSocket, admitted: Principal, connectionLog: ConnectionLog): Session {
    // the memberships found at admission would go stale over the socket's life: its operations ask the database
    const { memberships: _, ...principal } = admitted;
    const session: Session = { socket, principal, log: connectionLog, grants: new Map(), live: new Map(), closed: false, started: 0, applied: 0 };
    if (socket.readyState !== socket.OPEN) {
      session.closed = true;
      return session;
    }
    getOrCreate(this.byUser, principal.userId, () => new Set()).add(session);
    this.armExpiry(session);
    return session;
  }

  /** Forgets a closed socket and frees its subscription slots. */
  closed(session: Session): void {
    session.closed = true;
    clearTimeout(session.expiry);
    for (const id of [...session.live.keys()]) this.free(session, id);
    const sessions = this.byUser.get(session.principal.userId);
    sessions?.delete(session);
    if (sessions?.size === 0) this.byUser.delete(session.principal.userId);
  }

  /**
   * Whether the socket still stands; when not, it is closed with 4403. A database outage throws
   * SERVICE_UNAVAILABLE (a DomainError) and leaves the socket as it is: the caller decides.
   */
  async recheck(session: Session, lookUp: (principal: Principal) => Promise<Standing | null> = (p) => this.admission.recheck(p)): Promise<boolean> {
    if (session.closed) return false;
    const attempt = ++session.started;
    const standing = await lookUp(session.principal);
    if (session.closed) return false;
    if (!standing) return this.forbid(session, "credentials no longer valid");
    // an older re-check finishing after a newer one has nothing newer to say about permissions
    if (attempt < session.applied) return true;
    if (this.liveGrantsChanged(session, standing.grants)) return this.forbid(session, "permissions changed");
    session.applied = attempt;
    session.grants = standing.grants;
    return true;
  }

  /** Re-checks every socket of a user (a "credentials changed" event); an outage is logged, the sockets stay. */
  async recheckUser(userId: string): Promise<void> {
    const sessions = [...(this.byUser.get(userId) ?? [])];
    await Promise.all(sessions.map((s) => this.recheck(s).catch((error) => this.recheckFailed(error))));
  }

  /**
   * Re-checks every socket, one after another so as not to crowd the database pool. Sockets
   * admitted as the same principal (the same user and credential) stand or fall together: their
   * credential is looked up once in a round, not once per socket (a wall of 10,000 dashboards of
   * one account otherwise cost 10,000 look-ups a round).
   */
  async recheckAll(): Promise<void> {
    const round = new Map<string, Promise<Standing | null>>();
    const lookUp = (principal: Principal) => getOrCreate(round, JSON.stringify(principal), () => this.admission.recheck(principal));
    for (const sessions of [...this.byUser.values()]) {
      for (const session of [...sessions]) {
        try {
          await this.recheck(session, lookUp);
        } catch (error) {
          // the database is out of reach: the next round will tell
          this.recheckFailed(error);
          return;
        }
      }
    }
  }

  /**
   * Takes a slot for a new live subscription, or the refusal (TOO_MANY_SUBSCRIPTIONS) naming the
   * limit it would break; the socket stays open either way.
   */
  reserve(session: Session, id: string, payload: object, domains: readonly string[]): GraphQLError | undefined {
    if (session.closed) return new GraphQLError("This connection is closed.", { extensions: { code: "FORBIDDEN" } });
    // an id still live (its subscribe was completed while being admitted) would lose track of the first
    if (session.live.has(id)) {
      return new GraphQLError(`Subscriber for ${id} already exists.`, { extensions: { code: "BAD_USER_INPUT" } });
    }
    if (session.live.size >= this.limits.perSocket) {
      return tooMany(`Too many subscriptions: at most ${this.limits.perSocket} may be live on one connection.`);
    }
    const userId = session.principal.userId;
    const userCount = this.liveByUser.get(userId) ?? 0;
    if (userCount >= this.limits.perUser) {
      return tooMany(`Too many subscriptions: at most ${this.limits.perUser} may be live for one user.`);
    }
    session.live.set(id, { payload, domains });
    this.liveByUser.set(userId, userCount + 1);
    graphqlSubscriptionsActive.inc();
    return undefined;
  }

  /** Frees the slot of a subscription that completed (by the client, by its end, or by an error). */
  release(session: Session, id: string, payload: object): void {
    // an id the client reused since belongs to the newer subscription
    if (session.live.get(id)?.payload === payload) this.free(session, id);
  }

  private free(session: Session, id: string): void {
    if (!session.live.delete(id)) return;
    graphqlSubscriptionsActive.dec();
    const userId = session.principal.userId;
    const left = (this.liveByUser.get(userId) ?? 1) - 1;
    if (left > 0) this.liveByUser.set(userId, left);
    else this.liveByUser.delete(userId);
  }

  /** Whether the permissions changed in a domain a live subscription names (a superuser needs none). */
  private liveGrantsChanged(session: Session, grants: ReadonlyMap<string, readonly string[]>): boolean {
    if (session.principal.isSuperuser) return false;
    for (const { domains } of session.live.values()) {
      if (domains.some((d) => !samePermissions(session.grants.get(d), grants.get(d)))) return true;
    }
    return false;
  }

  private forbid(session: Session, reason: string): false {
    if (!session.closed) {
      session.closed = true;
      clearTimeout(session.expiry);
      session.log.credentialsWithdrawn(reason, FORBIDDEN_CLOSE, reason === TOKEN_EXPIRED);
      session.socket.close(FORBIDDEN_CLOSE, "Forbidden");
    }
    return false;
  }

  /** An access token's socket (OAuth, OpenID Connect) ends when the token does. */
  private armExpiry(session: Session): void {
    const credential = session.principal.credential;
    if (credential?.kind !== "oauth" && credential?.kind !== "oidc") return;
    const wait = credential.expiresAt.getTime() - Date.now();
    if (wait <= 0) {
      this.forbid(session, TOKEN_EXPIRED);
      return;
    }
    session.expiry = setTimeout(() => this.armExpiry(session), Math.min(wait, MAX_TIMER_MS));
    session.expiry.unref();
  }

  private recheckFailed(error: unknown): void {
    if (error instanceof DomainError && error.code === "SERVICE_UNAVAILABLE") return; // logged by the admission
    log.error("websocket credential re-check failed", { error });
  }
}

export const TOO_MANY_SUBSCRIPTIONS = "TOO_MANY_SUBSCRIPTIONS";

function tooMany(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: TOO_MANY_SUBSCRIPTIONS } });
}
