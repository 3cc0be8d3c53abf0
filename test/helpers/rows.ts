/**
 * What the database holds, for the assertions and arrangements that must look past the services
 * ("nothing was written", "one form per request"). Tests call these instead of Prisma, so a change
 * of the table schema touches this file, not the suite. `app` is anything holding the test's
 * database: a TestApp (helpers/app.ts) or TestServices (helpers/services.ts).
 */
import type { Database } from "../../src/db/client.ts";

type HasDb = { db: Database };
/** Rows of one domain (by name), or of the whole database when no domain is named. */
const inDomain = (domain?: string) => (domain === undefined ? {} : { domain: { name: domain } });

export function countCases(app: HasDb, filter: { domain?: string; externalId?: string } = {}): Promise<number> {
  const { domain, externalId } = filter;
  return app.db.prisma.case.count({ where: { ...inDomain(domain), ...(externalId === undefined ? {} : { externalId }) } });
}

/** Every case row (columns as stored), by id: a snapshot to compare before and after a refused write. */
export function caseRows(app: HasDb, filter: { domain?: string; externalId?: string } = {}) {
  const { domain, externalId } = filter;
  return app.db.prisma.case.findMany({ where: { ...inDomain(domain), ...(externalId === undefined ? {} : { externalId }) }, orderBy: { id: "asc" } });
}

export function caseRow(app: HasDb, id: string) {
  return app.db.prisma.case.findFirstOrThrow({ where: { id } });
}

/** Case indices: held by one case, or by the cases of one domain, or all. */
export function countCaseIndices(app: HasDb, filter: { caseId?: string; domain?: string } = {}): Promise<number> {
  const { caseId, domain } = filter;
  return app.db.prisma.caseIndex.count({
    where: { ...(caseId === undefined ? {} : { caseId }), ...(domain === undefined ? {} : { owner: inDomain(domain) }) },
  });
}

export function countForms(app: HasDb, domain?: string): Promise<number> {
  return app.db.prisma.form.count({ where: inDomain(domain) });
}

/** form_cases rows, of one form when `formId` is given. */
export function countFormCases(app: HasDb, formId?: string): Promise<number> {
  return app.db.prisma.formCase.count({ where: formId === undefined ? {} : { formId } });
}

/** A stored form with the cases it wrote. */
export function formRow(app: HasDb, id: string) {
  return app.db.prisma.form.findFirstOrThrow({ where: { id }, include: { formCases: true } });
}

export function countLocations(app: HasDb, domain?: string): Promise<number> {
  return app.db.prisma.location.count({ where: inDomain(domain) });
}

export function countApps(app: HasDb, domain?: string): Promise<number> {
  return app.db.prisma.app.count({ where: inDomain(domain) });
}

export function countJobs(app: HasDb, domain?: string): Promise<number> {
  return app.db.prisma.multimediaJob.count({ where: inDomain(domain) });
}

export function jobRow(app: HasDb, id: string) {
  return app.db.prisma.multimediaJob.findFirst({ where: { id } });
}

export function countDomains(app: HasDb, namePrefix = ""): Promise<number> {
  return app.db.prisma.domain.count({ where: { name: { startsWith: namePrefix } } });
}

export function domainRow(app: HasDb, name: string) {
  return app.db.prisma.domain.findUniqueOrThrow({ where: { name } });
}

export function userRow(app: HasDb, username: string) {
  return app.db.prisma.user.findUniqueOrThrow({ where: { username } });
}

export function apiKeyRows(app: HasDb, username?: string) {
  return app.db.prisma.apiKey.findMany({ where: username === undefined ? {} : { user: { username } } });
}

export function countOAuthTokens(app: HasDb): Promise<number> {
  return app.db.prisma.oAuthToken.count();
}

/** The OAuth token issued to a client (by its client_id), with its user. */
export function oauthTokenOf(app: HasDb, clientId: string) {
  return app.db.prisma.oAuthToken.findFirstOrThrow({ where: { client: { clientId } }, include: { user: true } });
}

/** Every row of a table, all columns as stored: the proof that no secret is kept in clear. */
export function tableRows(app: HasDb, table: "users" | "oauth_tokens" | "oauth_clients"): Promise<Record<string, unknown>[]> {
  return app.db.prisma.$queryRawUnsafe(`SELECT * FROM ${table}`);
}

/** The rate limiter's stored counters. */
export function rateLimitRows(app: HasDb) {
  return app.db.prisma.rateLimitCounter.findMany();
}

export function countRateLimitRows(app: HasDb, keyContains: string): Promise<number> {
  return app.db.prisma.rateLimitCounter.count({ where: { key: { contains: keyContains } } });
}

/** A stored counter as another process would have left it. */
export function putRateLimitRow(app: HasDb, key: string, points: number, expire: Date): Promise<unknown> {
  return app.db.prisma.rateLimitCounter.create({ data: { key, points, expire: BigInt(expire.getTime()) } });
}

/** One location row as PostgreSQL prints it (every column): compared whole before and after a refused write. */
export async function locationText(app: HasDb, id: string): Promise<string | undefined> {
  const rows = await app.db.prisma.$queryRaw<{ r: string }[]>`SELECT l::text AS r FROM locations l WHERE id = ${id}::uuid`;
  return rows[0]?.r;
}

/** Every location row as PostgreSQL prints it, by id. */
export async function locationTexts(app: HasDb): Promise<string[]> {
  return (await app.db.prisma.$queryRaw<{ r: string }[]>`SELECT l::text AS r FROM locations l ORDER BY id`).map((x) => x.r);
}

/** Sets a location's last_modified, for the ordering and range tests. */
export function setLocationModified(app: HasDb, id: string, at: Date): Promise<unknown> {
  return app.db.prisma.location.updateMany({ where: { id }, data: { lastModified: at } });
}

/**
 * A user row with no password that any scheme accepts ("!" is no hash): for principals that never
 * log in (the first superuser, the service tier's members), with no password hashing to wait for.
 */
export function insertUser(app: HasDb, username: string, superuser = false) {
  return app.db.prisma.user.create({
    data: { username, passwordHash: "!", digestHa1Md5: "!", digestHa1Sha256: "!", isSuperuser: superuser },
  });
}

/** A membership as stored, permissions unchecked (the admin service refuses unknown names). */
export async function insertMembership(app: HasDb, userId: string, domain: string, permissions: string[]): Promise<void> {
  const { id } = await domainRow(app, domain);
  await app.db.prisma.membership.create({ data: { userId, domainId: id, permissions } });
}
