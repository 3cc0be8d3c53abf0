import type { Prisma } from "../db/client.ts";
import type { App, AppVersion } from "../generated/prisma/client.ts";

/**
 * The apps tables (apps, app_versions), every query scoped to one domain. Writes that must commit with a caller's other writes take that caller's transaction:
 * an import's new version, a multimedia job's completion mapping its files (CONTRACT §4).
 */

/** A transaction of the Prisma client, as `$transaction(async (tx) => …)` hands it over. */
export type Transaction = Parameters<Parameters<Prisma["$transaction"]>[0]>[0];

export type AppRecord = App;
export type AppVersionRow = Pick<AppVersion, "appId" | "version" | "name" | "createdAt" | "source">;

/** canonical jr://file/ path → the stored file it resolves to */
export type MultimediaMap = Record<string, { fileId: string; mediaType: string; sha256: string }>;

/** An app row locked for the rest of the transaction. */
export interface LockedApp {
  id: string;
  name: string;
  docType: string;
  version: number;
  multimediaMap: MultimediaMap;
}

export class AppRepository {
  constructor(private readonly prisma: Prisma) {}

  transaction<T>(run: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(run);
  }

  find(domainId: string, appId: string): Promise<AppRecord | null> {
    return this.prisma.app.findFirst({ where: { id: appId, domainId } });
  }

  /** The domain's apps with these ids, in one query. */
  findMany(domainId: string, appIds: readonly string[]): Promise<AppRecord[]> {
    return this.prisma.app.findMany({ where: { id: { in: [...appIds] }, domainId } });
  }

  /** The domain's apps, oldest first. */
  list(domainId: string): Promise<AppRecord[]> {
    return this.prisma.app.findMany({ where: { domainId }, orderBy: { createdAt: "asc" } });
  }

  /** A new app at version 1, with its first version's source. */
  async create(domainId: string, app: { id: string; name: string; docType: string; source: object }): Promise<void> {
    await this.prisma.app.create({
      data: {
        id: app.id,
        domainId,
        name: app.name,
        docType: app.docType,
        version: 1,
        versions: { create: { version: 1, name: app.name, source: app.source } },
      },
    });
  }

  /** The app, locked (FOR UPDATE) until `tx` ends, or undefined when the domain has no such app. */
  async lock(tx: Transaction, domainId: string, appId: string): Promise<LockedApp | undefined> {
    type Row = { id: string; name: string; doc_type: string; version: number; multimedia_map: MultimediaMap | null };
    const [row] = await tx.$queryRaw<Row[]>`
      SELECT id, name, doc_type, version, multimedia_map FROM apps WHERE id = ${appId} AND domain_id = ${domainId}::uuid FOR UPDATE`;
    return row && { id: row.id, name: row.name, docType: row.doc_type, version: row.version, multimediaMap: row.multimedia_map ?? {} };
  }

  /** Makes `source` the app's current version `version` (the previous versions stay). */
  async addVersion(tx: Transaction, domainId: string, appId: string, version: { version: number; name: string; source: object }): Promise<void> {
    await tx.app.update({ where: { id_domainId: { id: appId, domainId } }, data: { name: version.name, version: version.version } });
    await tx.appVersion.create({ data: { appId, domainId, version: version.version, name: version.name, source: version.source } });
  }

  async setMultimediaMap(tx: Transaction, domainId: string, appId: string, map: MultimediaMap): Promise<void> {
    await tx.app.update({ where: { id_domainId: { id: appId, domainId } }, data: { multimediaMap: map } });
  }

  /** Every version of the domain's apps named, newest first per app, in one query. */
  versionsOf(domainId: string, appIds: readonly string[]): Promise<AppVersionRow[]> {
    return this.prisma.appVersion.findMany({
      where: { appId: { in: [...appIds] }, app: { domainId } },
      orderBy: [{ appId: "asc" }, { version: "desc" }],
      select: { appId: true, version: true, name: true, createdAt: true, source: true },
    });
  }

  /** The source of each named version of the domain's apps, in one query. */
  sourcesOf(domainId: string, versions: readonly { id: string; version: number }[]): Promise<{ appId: string; source: unknown }[]> {
    return this.prisma.appVersion.findMany({
      where: { OR: versions.map((a) => ({ appId: a.id, version: a.version })), app: { domainId } },
      select: { appId: true, source: true },
    });
  }

  /** The source of the domain's app's latest version (the multimedia worker's read), or undefined. */
  async latestSource(domainId: string, appId: string): Promise<unknown> {
    const latest = await this.prisma.appVersion.findFirst({ where: { appId, app: { domainId } }, orderBy: { version: "desc" } });
    return latest?.source;
  }
}
