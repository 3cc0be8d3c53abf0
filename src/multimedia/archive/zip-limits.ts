/**
 * The zip-bomb limits of CONTRACT §4 "Safety" as configured (ZIP_MAX_*), apart from the archive
 * readers (yauzl, file-type): the service and the worker name them at start, and load the readers
 * only when an archive arrives (an idle process never holds them).
 */
import type { Config } from "../../config.ts";

export interface ZipLimits {
  maxEntryBytes: number;
  maxTotalBytes: number;
  /** largest uncompressed / compressed ratio accepted for entries over 1 MiB, and for the whole archive past `ratioFloorBytes` */
  maxRatio: number;
  /** the whole archive's ratio is checked once the entries read total more than this */
  ratioFloorBytes: number;
}

/** The limits as configured, for the upload check and the worker alike. */
export function zipLimitsOf(config: Pick<Config, "zipMaxEntryBytes" | "zipMaxTotalBytes" | "zipMaxRatio" | "zipRatioFloorBytes">): ZipLimits {
  return {
    maxEntryBytes: config.zipMaxEntryBytes,
    maxTotalBytes: config.zipMaxTotalBytes,
    maxRatio: config.zipMaxRatio,
    ratioFloorBytes: config.zipRatioFloorBytes,
  };
}
