import type { Prisma } from "../db/client.ts";
import { AdminRepository } from "./admin.repository.ts";
import { badInput, forbidden, notFound } from "../errors.ts";
import { isUuid, newToken } from "../util/ids.ts";
import { isStorableText } from "../util/text.ts";
import { isPermission, type Permission, type Principal } from "../auth/principal.ts";
import { OAUTH_GRANTS } from "../auth/oauth.ts";
import { digestHa1, hashPassword, hashToken, verifyUserPassword } from "../auth/secrets.ts";
import { CREDENTIALS_CHANGED } from "../auth/credential.events.ts";
import { domainsOpenTo } from "../auth/permissions.ts";
import type { EventBus } from "../events/bus.ts";

/**
 * Domains, users, keys and OAuth clients: superuser-only administration (CONTRACT §6). The rules
 * are here; the statements are admin.repository.ts's.
 */

const DOMAIN_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
const USERNAME = /^[\w.@+-]{1,150}$/;

export interface NewUserInput {
  username: string;
  password: string;
  domain?: string | null;
  permissions?: string[] | null;
  superuser?: boolean | null;
}

export interface NewOAuthClientInput {
  name: string;
  grants?: string[] | null;
  /** the user a client_credentials token acts as */
  username?: string | null;
}

export class AdminService {
  private readonly repository: AdminRepository;

  constructor(
    private readonly prisma: Prisma,
    private readonly realm: string,
    private readonly events: EventBus,
  ) {
    this.repository = new AdminRepository(prisma);
  }

  /**
   * Tells every process, once the change is committed, that what this user may do has changed, so
   * that their open WebSockets are re-checked and their cached identities of the user dropped
   * (README: "stops working on every process"). Waits until every process has heard it, so that
   * the change is in effect everywhere by the time the caller gets its answer.
   */
  private async credentialsChanged(userId: string): Promise<void> {
    this.events.pubsub.publish(CREDENTIALS_CHANGED, { userId });
    await this.events.delivered();
  }

  private static requireSuperuser(principal: Principal) {
    if (!principal.isSuperuser) throw forbidden("Only a superuser may do this.");
  }

  async createDomain(principal: Principal, name: string) {
    AdminService.requireSuperuser(principal);
    if (!DOMAIN_NAME.test(name)) {
      throw badInput("Domain names are 1-63 characters: lowercase letters, digits and '-', not starting with '-'.");
    }
    const existing = await this.repository.domainByName(name);
    if (existing) throw badInput(`Domain '${name}' already exists`);
    return this.repository.createDomain(name);
  }

  async listDomains(principal: Principal) {
    AdminService.requireSuperuser(principal);
    return this.repository.listDomains();
  }

  /** A name PostgreSQL cannot hold (NUL, unpaired surrogate) names no row: the usual 404, no query. */
  private async domainByName(name: string) {
    const domain = isStorableText(name) ? await this.repository.domainByName(name) : null;
    if (!domain) throw notFound(`Domain '${name}' not found`);
    return domain;
  }

  private async userByName(username: string) {
    const user = isStorableText(username) ? await this.repository.userByName(username) : null;
    if (!user) throw notFound(`User '${username}' not found`);
    return user;
  }

  /** A free-text name to store (a key's or client's): refused when PostgreSQL cannot hold it. */
  private static requireStorable(what: string, name: string): void {
    if (!isStorableText(name)) throw badInput(`${what} cannot contain the NUL character or an unpaired surrogate.`);
  }

  private static permissions(names: string[]): Permission[] {
    const unknown = names.filter((n) => !isPermission(n));
    if (unknown.length) throw badInput(`Unknown permission(s): ${unknown.join(", ")}`);
    return [...new Set(names as Permission[])];
  }

  /** The stored forms of a password: a slow hash for Basic/OAuth, an HA1 per Digest algorithm. */
  private async passwordFields(username: string, password: string) {
    return {
      passwordHash: await hashPassword(password),
      digestHa1Md5: digestHa1("MD5", username, this.realm, password),
      digestHa1Sha256: digestHa1("SHA-256", username, this.realm, password),
    };
  }

  /**
   * Creates the user, or, when the username exists, sets its password: either way the user ends with
   * the given password and, when a domain is named, exactly the given permissions in it.
   */
  async createUser(principal: Principal, input: NewUserInput) {
    AdminService.requireSuperuser(principal);
    if (!USERNAME.test(input.username)) {
      throw badInput("Usernames are 1-150 characters: letters, digits and . @ + - _");
    }
    if (input.password.length < 1) throw badInput("A password is required.");
    const permissions = AdminService.permissions(input.permissions ?? []);
    const domain = input.domain ? await this.domainByName(input.domain) : null;
    if (!domain && permissions.length) throw badInput("Permissions are granted in a domain: give 'domain'.");
    const secrets = await this.passwordFields(input.username, input.password);
    const isSuperuser = input.superuser ?? undefined;
    const user = await this.repository.saveUser(
      { username: input.username, secrets, isSuperuser },
      domain ? { domainId: domain.id, permissions } : null,
    );
    await this.credentialsChanged(user.id);
    return user;
  }

  /** Ensures a superuser with this password exists (BOOTSTRAP_ADMIN at start-up). */
  async bootstrapSuperuser(username: string, password: string) {
    // every process of a database starts with the same BOOTSTRAP_ADMIN: one already in place is left
    // alone (a new salt would be a new password to the admin's open sockets on the other processes); a new
    // password, or a new AUTH_REALM for Digest, is set and announced
    const existing = await this.repository.userByName(username);
    const unchanged =
      existing?.isSuperuser &&
      existing.isActive &&
      existing.digestHa1Sha256 === digestHa1("SHA-256", username, this.realm, password) &&
      (await verifyUserPassword(password, existing.passwordHash));
    if (unchanged) return;
    const secrets = await this.passwordFields(username, password);
    const user = await this.repository.saveSuperuser(username, secrets);
    // other processes may hold the previous password's admission
    await this.credentialsChanged(user.id);
  }

  async setPermissions(principal: Principal, username: string, domainName: string, names: string[]) {
    AdminService.requireSuperuser(principal);
    const permissions = AdminService.permissions(names);
    const [user, domain] = await Promise.all([this.userByName(username), this.domainByName(domainName)]);
    const membership = await this.repository.setPermissions(user.id, domain.id, permissions);
    await this.credentialsChanged(user.id);
    return membership;
  }

  async removeMembership(principal: Principal, username: string, domainName: string) {
    AdminService.requireSuperuser(principal);
    const [user, domain] = await Promise.all([this.userByName(username), this.domainByName(domainName)]);
    const count = await this.repository.removeMembership(user.id, domain.id);
    if (count > 0) await this.credentialsChanged(user.id);
    return count > 0;
  }

  async setUserActive(principal: Principal, username: string, active: boolean) {
    AdminService.requireSuperuser(principal);
    await this.userByName(username);
    const user = await this.repository.setUserActive(username, active);
    await this.credentialsChanged(user.id);
    return user;
  }

  async listUsers(principal: Principal, domainName?: string | null) {
    AdminService.requireSuperuser(principal);
    return this.repository.listUsers(domainName ? (await this.domainByName(domainName)).id : undefined);
  }

  /** The caller's own user row (any authenticated caller may read it). */
  async me(principal: Principal) {
    return this.repository.userByIdOrThrow(principal.userId);
  }

  /** The user, for `Query.node`: to a superuser or to the user themselves; null for anyone else, as for no user. */
  async visibleUser(principal: Principal, userId: string) {
    if (!isUuid(userId) || (!principal.isSuperuser && principal.userId !== userId)) return null;
    return this.repository.userById(userId);
  }

  /** The domain, for `Query.node`: to a superuser or to a member; null for anyone else, as for no domain. */
  async visibleDomain(principal: Principal, domainId: string) {
    if (!isUuid(domainId)) return null;
    return this.repository.visibleDomain(domainId, principal.isSuperuser ? undefined : principal.userId);
  }

  /** The API key, for `Query.node`: to a superuser, who alone may list keys; null for anyone else, as for no key. */
  async visibleApiKey(principal: Principal, keyId: string) {
    if (!principal.isSuperuser || !isUuid(keyId)) return null;
    return this.repository.apiKey(keyId);
  }

  /** Of these domain names, those the principal may see anything in (see domainsOpenTo): one query at most. */
  openDomains(principal: Principal, names: Iterable<string>): Promise<Set<string>> {
    return domainsOpenTo(this.prisma, principal, names);
  }

  async memberships(userId: string) {
    return this.repository.memberships(userId);
  }

  /** A new API key for the user; the key is returned here once and stored only as a hash. */
  async createApiKey(principal: Principal, username: string, name = "") {
    AdminService.requireSuperuser(principal);
    AdminService.requireStorable("An API key name", name);
    const user = await this.userByName(username);
    const key = newToken(30);
    const row = await this.repository.createApiKey({ userId: user.id, name, keyHash: hashToken(key), prefix: key.slice(0, 6) });
    return { key, apiKey: row };
  }

  async listApiKeys(principal: Principal, username: string) {
    AdminService.requireSuperuser(principal);
    const user = await this.userByName(username);
    return this.repository.listApiKeys(user.id);
  }

  async revokeApiKey(principal: Principal, id: string) {
    AdminService.requireSuperuser(principal);
    const key = isUuid(id) ? await this.repository.apiKey(id) : null;
    if (!key) throw notFound(`API key '${id}' not found`);
    const revoked = await this.repository.revokeApiKey(key.id, key.revokedAt ?? new Date());
    await this.credentialsChanged(key.userId);
    return revoked;
  }

  /** A new OAuth client; its secret is returned here once and stored only as a hash. */
  async createOAuthClient(principal: Principal, input: NewOAuthClientInput) {
    AdminService.requireSuperuser(principal);
    const grants = input.grants?.length ? [...new Set(input.grants)] : ["password", "refresh_token"];
    const unknown = grants.filter((g) => !(OAUTH_GRANTS as readonly string[]).includes(g));
    if (unknown.length) throw badInput(`Unsupported grant type(s): ${unknown.join(", ")}`);
    AdminService.requireStorable("A client name", input.name);
    const user = input.username ? await this.userByName(input.username) : null;
    if (grants.includes("client_credentials") && !user) {
      throw badInput("A client_credentials client acts as a user: give 'username'.");
    }
    const clientId = newToken(18);
    const clientSecret = newToken(32);
    const client = await this.repository.createOAuthClient({
      clientId,
      secretHash: hashToken(clientSecret),
      name: input.name,
      grants,
      userId: user?.id ?? null,
    });
    return { client, clientSecret };
  }

  /** Revokes every OAuth token of a user at once (access and refresh). */
  async revokeOAuthTokens(principal: Principal, username: string) {
    AdminService.requireSuperuser(principal);
    const user = await this.userByName(username);
    const count = await this.repository.revokeOAuthTokens(user.id);
    if (count > 0) await this.credentialsChanged(user.id);
    return count;
  }
}
