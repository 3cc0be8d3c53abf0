/**
 * The tables administration writes (domains, users, memberships, API keys, OAuth clients and
 * tokens): every statement of admin.service.ts, which keeps the rules (superuser only, names,
 * permissions) and the announcement of changed credentials.
 */
import type { Prisma } from "../db/client.ts";

/** A user's stored secrets: a slow hash for Basic/OAuth, an HA1 per Digest algorithm. */
export interface PasswordFields {
  passwordHash: string;
  digestHa1Md5: string;
  digestHa1Sha256: string;
}

export class AdminRepository {
  constructor(private readonly prisma: Prisma) {}

  domainByName(name: string) {
    return this.prisma.domain.findUnique({ where: { name } });
  }

  createDomain(name: string) {
    return this.prisma.domain.create({ data: { name } });
  }

  listDomains() {
    return this.prisma.domain.findMany({ orderBy: { name: "asc" } });
  }

  /** The domain with this id, if visible: to anyone (`memberId` undefined) or to its members only. */
  visibleDomain(domainId: string, memberId: string | undefined) {
    const membersOnly = memberId === undefined ? {} : { memberships: { some: { userId: memberId } } };
    return this.prisma.domain.findFirst({ where: { id: domainId, ...membersOnly } });
  }

  userByName(username: string) {
    return this.prisma.user.findUnique({ where: { username } });
  }

  userById(userId: string) {
    return this.prisma.user.findUnique({ where: { id: userId } });
  }

  userByIdOrThrow(userId: string) {
    return this.prisma.user.findUniqueOrThrow({ where: { id: userId } });
  }

  /** Users, by username; only the domain's members when a domain id is given. */
  listUsers(domainId?: string) {
    const where = domainId ? { memberships: { some: { domainId } } } : {};
    return this.prisma.user.findMany({ where, orderBy: { username: "asc" } });
  }

  /**
   * Creates the user or sets its secrets (and superuser flag, when given), and, when a domain is
   * given, sets exactly these permissions in it: in one transaction.
   */
  saveUser(
    user: { username: string; secrets: PasswordFields; isSuperuser: boolean | undefined },
    membership: { domainId: string; permissions: string[] } | null,
  ) {
    const { username, secrets, isSuperuser } = user;
    return this.prisma.$transaction(async (tx) => {
      const saved = await tx.user.upsert({
        where: { username },
        create: { username, ...secrets, isSuperuser: isSuperuser ?? false },
        update: { ...secrets, ...(isSuperuser === undefined ? {} : { isSuperuser }) },
      });
      if (membership) {
        await tx.membership.upsert({
          where: { userId_domainId: { userId: saved.id, domainId: membership.domainId } },
          create: { userId: saved.id, domainId: membership.domainId, permissions: membership.permissions },
          update: { permissions: membership.permissions },
        });
      }
      return saved;
    });
  }

  /** An active superuser with these secrets, created or updated. */
  saveSuperuser(username: string, secrets: PasswordFields) {
    return this.prisma.user.upsert({
      where: { username },
      create: { username, ...secrets, isSuperuser: true },
      update: { ...secrets, isSuperuser: true, isActive: true },
    });
  }

  setUserActive(username: string, active: boolean) {
    return this.prisma.user.update({ where: { username }, data: { isActive: active } });
  }

  setPermissions(userId: string, domainId: string, permissions: string[]) {
    return this.prisma.membership.upsert({
      where: { userId_domainId: { userId, domainId } },
      create: { userId, domainId, permissions },
      update: { permissions },
      include: { domain: true },
    });
  }

  /** Removes the membership: how many there were (0 or 1). */
  async removeMembership(userId: string, domainId: string): Promise<number> {
    const { count } = await this.prisma.membership.deleteMany({ where: { userId, domainId } });
    return count;
  }

  memberships(userId: string) {
    return this.prisma.membership.findMany({ where: { userId }, include: { domain: true }, orderBy: { createdAt: "asc" } });
  }

  createApiKey(key: { userId: string; name: string; keyHash: string; prefix: string }) {
    return this.prisma.apiKey.create({ data: key, include: { user: true } });
  }

  listApiKeys(userId: string) {
    return this.prisma.apiKey.findMany({ where: { userId }, include: { user: true }, orderBy: { createdAt: "asc" } });
  }

  apiKey(id: string) {
    return this.prisma.apiKey.findUnique({ where: { id }, include: { user: true } });
  }

  revokeApiKey(id: string, revokedAt: Date) {
    return this.prisma.apiKey.update({ where: { id }, data: { revokedAt }, include: { user: true } });
  }

  createOAuthClient(client: { clientId: string; secretHash: string; name: string; grants: string[]; userId: string | null }) {
    return this.prisma.oAuthClient.create({ data: client });
  }

  /** Revokes the user's live OAuth tokens: how many. */
  async revokeOAuthTokens(userId: string): Promise<number> {
    const { count } = await this.prisma.oAuthToken.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: new Date() } });
    return count;
  }
}
