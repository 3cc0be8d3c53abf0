import { readFile } from "node:fs/promises";
import type { Principal } from "../auth/principal.ts";
import { authorize, type DomainRef } from "../auth/permissions.ts";
import type { Prisma } from "../db/client.ts";
import { DomainError, badInput, notFound } from "../errors.ts";
import { newHexId } from "../util/ids.ts";
import { isStorableText } from "../util/text.ts";
import { findReferences, MAX_SOURCE_DEPTH, referencePathOf, type Reference } from "./references.ts";

/**
 * Applications (CONTRACT §4 "Application source", "POST import_app/"): a JSON source imported as a
 * new app or as the next version of one; every version's source kept as sent.
 */

export const DOC_TYPES = ["Application", "LinkedApplication", "RemoteApp"] as const;

export interface ImportInput {
  /** the uploaded app_file, on disk; undefined when none was sent */
  file?: { path: string; size: number };
  appName?: string;
  appId?: string;
}

export interface ImportResult {
  created: boolean;
  appId: string;
  version: number;
  warnings: string[];
}

/** canonical jr://file/ path → the stored file it resolves to */
export type MultimediaMap = Record<string, { fileId: string; mediaType: string; sha256: string }>;

export type AppVersionRow = { appId: string; version: number; name: string; createdAt: Date; source: unknown };

function groupBy<T>(rows: T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const group = groups.get(key(row));
    if (group) group.push(row);
    else groups.set(key(row), [row]);
  }
  return groups;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** An id that is not storable names nothing; other such input is refused (the multimedia jobs use it too). */
export const storable = isStorableText;

/** Why a parsed source cannot be stored as jsonb, or undefined when it can. */
function unstorableSource(source: unknown): string | undefined {
  const stack: [unknown, number][] = [[source, 0]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (typeof value === "string") {
      if (!storable(value)) return "The application file contains text that cannot be stored (a NUL character or an unpaired surrogate).";
    } else if (value && typeof value === "object") {
      if (depth >= MAX_SOURCE_DEPTH) return `The application file is nested more than ${MAX_SOURCE_DEPTH} levels deep.`;
      for (const [key, item] of Object.entries(value)) {
        if (!Array.isArray(value) && !storable(key)) {
          return "The application file contains text that cannot be stored (a NUL character or an unpaired surrogate).";
        }
        stack.push([item, depth + 1]);
      }
    }
  }
  return undefined;
}

export function missingWarning(references: Reference[], map: MultimediaMap): string[] {
  const present = new Set(Object.keys(map).map((p) => p.toLowerCase()));
  const missing = references.filter((r) => !present.has(r.path.toLowerCase())).length;
  return missing ? [`the application is missing multimedia file(s): ${missing} referenced file(s) not yet uploaded`] : [];
}

export class AppService {
  constructor(
    private readonly prisma: Prisma,
    private readonly sourceLimitBytes: number,
  ) {}

  domain(principal: Principal, domainName: string): Promise<DomainRef> {
    return authorize(this.prisma, principal, domainName, "apps");
  }

  async importApp(principal: Principal, domainName: string, input: ImportInput): Promise<ImportResult> {
    const domain = await this.domain(principal, domainName);
    if (!input.file) throw badInput("app_file is required");
    const appName = input.appName?.trim() ? input.appName : undefined;
    const appId = input.appId?.trim() ? input.appId.trim() : undefined;
    if (!appId && !appName) throw badInput("app_name is required");
    const source = await this.readSource(input.file);
    const docType = source.doc_type === undefined ? "Application" : source.doc_type;
    if (typeof docType !== "string" || !(DOC_TYPES as readonly string[]).includes(docType)) {
      throw badInput(`Unsupported doc_type '${String(docType)}': expected one of ${DOC_TYPES.join(", ")}`);
    }
    if (appName !== undefined && !storable(appName)) throw badInput("app_name contains a character that cannot be stored (NUL).");
    const references = findReferences(source);
    if (!appId) {
      const id = newHexId();
      await this.prisma.app.create({
        data: {
          id,
          domainId: domain.id,
          name: appName!,
          docType,
          version: 1,
          versions: { create: { version: 1, name: appName!, source: source as object } },
        },
      });
      return { created: true, appId: id, version: 1, warnings: missingWarning(references, {}) };
    }
    if (!storable(appId)) throw notFound(`Application '${appId}' not found`);
    return this.prisma.$transaction(async (tx) => {
      const [app] = await tx.$queryRaw<{ id: string; name: string; doc_type: string; version: number; multimedia_map: MultimediaMap }[]>`
        SELECT id, name, doc_type, version, multimedia_map FROM apps WHERE id = ${appId} AND domain_id = ${domain.id}::uuid FOR UPDATE`;
      if (!app) throw notFound(`Application '${appId}' not found`);
      if (app.doc_type !== docType) {
        throw badInput(`Incompatible application type: the application is a ${app.doc_type}, the file is a ${docType}`);
      }
      const version = app.version + 1;
      const name = appName ?? app.name;
      await tx.app.update({ where: { id: app.id }, data: { name, version } });
      await tx.appVersion.create({ data: { appId: app.id, version, name, source: source as object } });
      return { created: false, appId: app.id, version, warnings: missingWarning(references, app.multimedia_map ?? {}) };
    });
  }

  private async readSource(file: { path: string; size: number }): Promise<Record<string, unknown>> {
    // §1: a body over the size limit is 413
    if (file.size > this.sourceLimitBytes) {
      throw new DomainError("PAYLOAD_TOO_LARGE", `The application file is larger than ${this.sourceLimitBytes} bytes.`);
    }
    let source: unknown;
    try {
      source = JSON.parse(await readFile(file.path, "utf8"));
    } catch {
      throw badInput("Invalid JSON file");
    }
    if (!isObject(source)) throw badInput("Invalid JSON file");
    const unstorable = unstorableSource(source);
    if (unstorable) throw badInput(unstorable);
    return source;
  }

  /** The app, in the domain, or 404. */
  async app(domain: DomainRef, appId: string) {
    if (!storable(appId)) throw notFound(`Application '${appId}' not found`);
    const app = await this.prisma.app.findFirst({ where: { id: appId, domainId: domain.id } });
    if (!app) throw notFound(`Application '${appId}' not found`);
    return app;
  }

  /** The stored file an app maps a path to (`jr://file/` optional, any case), or null. */
  async mediaFile(principal: Principal, domainName: string, appId: string, path: string) {
    const app = await this.app(await this.domain(principal, domainName), appId);
    const wanted = referencePathOf(path).toLowerCase();
    const map = (app.multimediaMap ?? {}) as MultimediaMap;
    const entry = Object.entries(map).find(([key]) => key.toLowerCase() === wanted)?.[1];
    if (!entry) return null;
    return this.prisma.multimediaFile.findFirst({ where: { id: entry.fileId, domainId: app.domainId } });
  }

  /** The domain's apps, oldest first. */
  list(domain: DomainRef) {
    return this.prisma.app.findMany({ where: { domainId: domain.id }, orderBy: { createdAt: "asc" } });
  }

  /** The app, in the domain, or null. */
  find(domain: DomainRef, appId: string) {
    return storable(appId) ? this.prisma.app.findFirst({ where: { id: appId, domainId: domain.id } }) : Promise.resolve(null);
  }

  /** Every version of each of the domain's apps named, newest first, in one query. */
  async versionsOf(domain: Pick<DomainRef, "id">, appIds: readonly string[]): Promise<Map<string, AppVersionRow[]>> {
    const rows = await this.prisma.appVersion.findMany({
      where: { appId: { in: [...appIds] }, app: { domainId: domain.id } },
      orderBy: [{ appId: "asc" }, { version: "desc" }],
    });
    return groupBy(rows, (r) => r.appId);
  }

  /** The references of each app's current version (apps of the domain only), in one query. */
  async referencesOf(domain: Pick<DomainRef, "id">, apps: readonly { id: string; version: number }[]): Promise<Map<string, Reference[]>> {
    if (!apps.length) return new Map();
    const rows = await this.prisma.appVersion.findMany({
      where: { OR: apps.map((a) => ({ appId: a.id, version: a.version })), app: { domainId: domain.id } },
      select: { appId: true, source: true },
    });
    return new Map(rows.map((r) => [r.appId, findReferences(r.source)]));
  }

  /** The domain's stored multimedia files with these ids, in one query. */
  async filesOf(domain: Pick<DomainRef, "id">, fileIds: readonly string[]) {
    const rows = await this.prisma.multimediaFile.findMany({ where: { id: { in: [...fileIds] }, domainId: domain.id } });
    return new Map(rows.map((r) => [r.id, r]));
  }

  async references(appId: string): Promise<Reference[]> {
    const latest = await this.prisma.appVersion.findFirst({ where: { appId }, orderBy: { version: "desc" } });
    return latest ? findReferences(latest.source) : [];
  }
}
