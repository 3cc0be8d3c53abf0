/**
 * The trusted calls on apps that no caller's permission stands behind: the multimedia worker's,
 * which acts for a job already admitted at upload. Only the assembly (src/services.ts) hands this
 * to multimedia's attempt and worker; no face may import it (.dependency-cruiser.cjs,
 * "faces-not-to-trusted"). Each call still names the domain, and reads or writes nothing outside it.
 */
import type { DomainRef } from "../auth/permissions.ts";
import type { Prisma } from "../db/client.ts";
import { AppRepository, type MultimediaMap, type Transaction } from "./app.repository.ts";
import { findReferences, type Reference } from "./references.ts";

/** A stored file mapped to an app's canonical reference path. */
export interface MediaMapping {
  path: string;
  fileId: string;
  mediaType: string;
  sha256: string;
}

export class AppSystem {
  private readonly repository: AppRepository;

  constructor(prisma: Prisma) {
    this.repository = new AppRepository(prisma);
  }

  /** The references of the domain's app's current version (none when the domain has no such app): what a multimedia job matches its archive against. */
  async references(domain: Pick<DomainRef, "id">, appId: string): Promise<Reference[]> {
    const source = await this.repository.latestSource(domain.id, appId);
    return source === undefined ? [] : findReferences(source);
  }

  /**
   * Maps stored files to the app's reference paths, within the caller's transaction (a multimedia
   * job's completion): a path already mapped in another case is replaced. Nothing when the domain
   * has no such app. The app's multimedia_map has no other writer.
   */
  async mapMedia(tx: Transaction, domain: Pick<DomainRef, "id">, appId: string, mappings: readonly MediaMapping[]): Promise<void> {
    const app = await this.repository.lock(tx, domain.id, appId);
    if (!app) return;
    const map: MultimediaMap = { ...app.multimediaMap };
    for (const m of mappings) {
      for (const key of Object.keys(map)) if (key.toLowerCase() === m.path.toLowerCase()) delete map[key];
      map[m.path] = { fileId: m.fileId, mediaType: m.mediaType, sha256: m.sha256 };
    }
    await this.repository.setMultimediaMap(tx, domain.id, app.id, map);
  }
}
