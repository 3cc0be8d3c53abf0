import { readFile } from "node:fs/promises";
import type { Principal } from "../auth/principal.ts";
import { authorize, type DomainRef } from "../auth/permissions.ts";
import type { Prisma } from "../db/client.ts";
import { DomainError, badInput, notFound } from "../errors.ts";
import { newHexId } from "../util/ids.ts";
import { isObject } from "../util/json.ts";
import { isStorableText } from "../util/text.ts";
import { AppRepository, type AppRecord, type AppVersionRow, type MultimediaMap } from "./app.repository.ts";
import { findReferences, MAX_SOURCE_DEPTH, referencePathOf, type Reference } from "./references.ts";

/**
 * Applications (CONTRACT §4 "Application source", "POST import_app/"): a JSON source imported as a
 * new app or as the next version of one; every version's source kept as sent. The app's
 * multimedia_map has one writer, app.system.ts's `mapMedia`, which a multimedia job calls in the
 * transaction that completes it (an import keeps the map as it is).
 *
 * Scope first: `in(principal, domain)` answers 401/403/404 before any input is read; the returned
 * AppScope holds the domain for every later call, the GraphQL loaders' batched reads included.
 * The worker's trusted calls, which no caller's permission stands behind, are app.system.ts's.
 */

export type { AppRecord, AppVersionRow, MultimediaMap } from "./app.repository.ts";

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

/** Why a parsed source cannot be stored as jsonb, or undefined when it can. */
function unstorableSource(source: unknown): string | undefined {
  const stack: [unknown, number][] = [[source, 0]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (typeof value === "string") {
      if (!isStorableText(value)) return "The application file contains text that cannot be stored (a NUL character or an unpaired surrogate).";
    } else if (value && typeof value === "object") {
      if (depth >= MAX_SOURCE_DEPTH) return `The application file is nested more than ${MAX_SOURCE_DEPTH} levels deep.`;
      for (const [key, item] of Object.entries(value)) {
        if (!Array.isArray(value) && !isStorableText(key)) {
          return "The application file contains text that cannot be stored (a NUL character or an unpaired surrogate).";
        }
        stack.push([item, depth + 1]);
      }
    }
  }
  return undefined;
}

function missingWarning(references: Reference[], map: MultimediaMap): string[] {
  const present = new Set(Object.keys(map).map((p) => p.toLowerCase()));
  const missing = references.filter((r) => !present.has(r.path.toLowerCase())).length;
  return missing ? [`the application is missing multimedia file(s): ${missing} referenced file(s) not yet uploaded`] : [];
}

/** The entry of the app's map for a path (`jr://file/` optional, any case), if any. */
export function mappedFile(app: Pick<AppRecord, "multimediaMap">, path: string): MultimediaMap[string] | undefined {
  const wanted = referencePathOf(path).toLowerCase();
  const map = (app.multimediaMap ?? {}) as MultimediaMap;
  return Object.entries(map).find(([key]) => key.toLowerCase() === wanted)?.[1];
}

export class AppService {
  private readonly repository: AppRepository;

  constructor(
    private readonly prisma: Prisma,
    private readonly sourceLimitBytes: number,
  ) {
    this.repository = new AppRepository(prisma);
  }

  /** The caller's apps in the domain: 401/403/404 (CONTRACT §1 "Permissions", edit_apps) before anything else. */
  async in(principal: Principal, domainName: string): Promise<AppScope> {
    const domain = await authorize(this.prisma, principal, domainName, "apps");
    return new AppScope(domain, this.repository, this.sourceLimitBytes);
  }
}

/** The apps of one domain the caller may edit. */
export class AppScope {
  constructor(
    readonly domain: DomainRef,
    private readonly repository: AppRepository,
    private readonly sourceLimitBytes: number,
  ) {}

  /** The app, in the domain, or 404. */
  async app(appId: string): Promise<AppRecord> {
    const app = await this.find(appId);
    if (!app) throw notFound(`Application '${appId}' not found`);
    return app;
  }

  /** The app, in the domain, or null (an id that cannot be stored names nothing). */
  find(appId: string): Promise<AppRecord | null> {
    return isStorableText(appId) ? this.repository.find(this.domain.id, appId) : Promise.resolve(null);
  }

  /** The domain's apps, oldest first. */
  list(): Promise<AppRecord[]> {
    return this.repository.list(this.domain.id);
  }

  /** The domain's apps with these ids, in one query (the GraphQL loaders). */
  async appsOf(appIds: readonly string[]): Promise<Map<string, AppRecord>> {
    return new Map((await this.repository.findMany(this.domain.id, appIds)).map((a) => [a.id, a]));
  }

  /** Every version of each of the domain's apps named, newest first, in one query (the GraphQL loaders). */
  async versionsOf(appIds: readonly string[]): Promise<Map<string, AppVersionRow[]>> {
    return Map.groupBy(await this.repository.versionsOf(this.domain.id, appIds), (r) => r.appId);
  }

  /** The references of each app's current version in one query (the GraphQL loaders). */
  async referencesOf(apps: readonly { id: string; version: number }[]): Promise<Map<string, Reference[]>> {
    if (!apps.length) return new Map();
    const rows = await this.repository.sourcesOf(this.domain.id, apps);
    return new Map(rows.map((r) => [r.appId, findReferences(r.source)]));
  }

  async importApp(input: ImportInput): Promise<ImportResult> {
    if (!input.file) throw badInput("app_file is required");
    const appName = input.appName?.trim() ? input.appName : undefined;
    const appId = input.appId?.trim() ? input.appId.trim() : undefined;
    if (!appId && !appName) throw badInput("app_name is required");
    const source = await this.readSource(input.file);
    const docType = source.doc_type === undefined ? "Application" : source.doc_type;
    if (typeof docType !== "string" || !(DOC_TYPES as readonly string[]).includes(docType)) {
      throw badInput(`Unsupported doc_type '${String(docType)}': expected one of ${DOC_TYPES.join(", ")}`);
    }
    if (appName !== undefined && !isStorableText(appName)) throw badInput("app_name contains a character that cannot be stored (NUL).");
    const references = findReferences(source);
    if (!appId) {
      const id = newHexId();
      await this.repository.create(this.domain.id, { id, name: appName!, docType, source });
      return { created: true, appId: id, version: 1, warnings: missingWarning(references, {}) };
    }
    if (!isStorableText(appId)) throw notFound(`Application '${appId}' not found`);
    return this.repository.transaction(async (tx) => {
      const app = await this.repository.lock(tx, this.domain.id, appId);
      if (!app) throw notFound(`Application '${appId}' not found`);
      if (app.docType !== docType) {
        throw badInput(`Incompatible application type: the application is a ${app.docType}, the file is a ${docType}`);
      }
      const version = app.version + 1;
      await this.repository.addVersion(tx, this.domain.id, app.id, { version, name: appName ?? app.name, source });
      return { created: false, appId: app.id, version, warnings: missingWarning(references, app.multimediaMap) };
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
}
