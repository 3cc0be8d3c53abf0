import { DomainError } from "../errors.ts";
import { arrayOf, boolean, integer, ordered, ref, serialize, string, type KeyTable, type Schema } from "../openapi/schema.ts";
import type { ArchiveResult, MatchedFile } from "./archive/archive-result.ts";
import { progressPercent, type MultimediaStatus } from "./job.events.ts";

/**
 * The multimedia status record of CONTRACT §4 "GET {app_id}/multimedia/status/{processing_id}/":
 * `success, complete, in_queue, progress {percent, current, total}, errors, processing_id`, then
 * the result fields only once complete, every key in the contract's order. A failed job has no
 * record: REST answers 500. The key tables are also the OpenAPI document's schemas
 * (multimedia.openapi.ts).
 */

class TaskFailed extends DomainError {
  constructor() {
    super("INTERNAL_SERVER_ERROR", "Multimedia processing task failed");
  }
}

type Reasoned = { path: string; reason: string };

/** A stored file matched to a path of the application. */
export const MATCHED_FILE_KEYS = {
  path: { schema: string("the application's own path (jr://file/…)"), of: (f: MatchedFile) => f.path },
  original_path: { schema: string("the entry's path in the archive"), of: (f: MatchedFile) => f.original_path },
  md5: { schema: string("MD5 of the content, hex", { pattern: "^[0-9a-f]{32}$" }), of: (f: MatchedFile) => f.md5 },
  size: { schema: integer("bytes"), of: (f: MatchedFile) => f.size },
  content_type: { schema: string("the media type sniffed from the content"), of: (f: MatchedFile) => f.content_type },
} satisfies KeyTable<MatchedFile>;

/** An archive entry that was not stored, and why. */
export const REASONED_KEYS = {
  path: { schema: string("the entry's path in the archive"), of: (f: Reasoned) => f.path },
  reason: { schema: string("why it was not stored"), of: (f: Reasoned) => f.reason },
} satisfies KeyTable<Reasoned>;

const files = (list: MatchedFile[]) => list.map((f) => serialize(MATCHED_FILE_KEYS, f));
const reasoned = (list: Reasoned[]) => list.map((f) => serialize(REASONED_KEYS, f));
const matchedFiles = arrayOf(ref("MatchedFile"));
const count = (description: string, of: (r: ArchiveResult) => number) => ({ schema: integer(description), of });

/**
 * The result fields in the contract's order. A stored result is jsonb, which keeps no key order,
 * so it is rebuilt key by key.
 */
export const RESULT_KEYS = {
  matched_count: count("files matched to the application", (r) => r.matched_count),
  unmatched_count: count("files not matched", (r) => r.unmatched_count),
  total_files: count("entries in the archive, directories included", (r) => r.total_files),
  processed_files: count("entries processed", (r) => r.processed_files),
  image_count: count("images matched", (r) => r.image_count),
  audio_count: count("audio files matched", (r) => r.audio_count),
  video_count: count("video files matched", (r) => r.video_count),
  matched_files: {
    schema: ordered("Matched files by media class.", { AppImage: matchedFiles, AppAudio: matchedFiles, AppVideo: matchedFiles }),
    of: (r: ArchiveResult) => ({
      AppImage: files(r.matched_files.AppImage),
      AppAudio: files(r.matched_files.AppAudio),
      AppVideo: files(r.matched_files.AppVideo),
    }),
  },
  unmatched_files: {
    schema: arrayOf(ref("ReasonedEntry"), "media files that matched no path of the application"),
    of: (r: ArchiveResult) => reasoned(r.unmatched_files),
  },
  skipped_files: { schema: arrayOf(ref("ReasonedEntry"), "entries that are not media"), of: (r: ArchiveResult) => reasoned(r.skipped_files) },
} satisfies KeyTable<ArchiveResult>;

const resultFields = (r: ArchiveResult) => serialize(RESULT_KEYS, r);

/** The status fields every record has, in the contract's order (the result's follow once complete). */
export const STATUS_KEYS = {
  success: { schema: { const: true, description: "the status was read" } as Schema, of: () => true },
  complete: { schema: boolean("whether processing has finished"), of: (s: MultimediaStatus) => s.state === "complete" },
  in_queue: { schema: boolean("true until complete"), of: (s: MultimediaStatus) => s.state !== "complete" },
  progress: {
    schema: ordered("Entries done of entries in the archive.", {
      percent: integer("floor(100·current/total); 100 for an empty archive once complete", { maximum: 100 }),
      current: integer("entries done"),
      total: integer("entries in the archive"),
    }),
    of: (s: MultimediaStatus) => ({ percent: progressPercent(s), current: s.current, total: s.total }),
  },
  errors: { schema: arrayOf({ type: "string" }, "errors met while processing"), of: (s: MultimediaStatus) => s.errors },
  processing_id: { schema: string("the id polled", { pattern: "^dl-[0-9a-f]{32}$" }), of: (s: MultimediaStatus) => s.id },
} satisfies KeyTable<MultimediaStatus>;

/** The REST status body of a job, or TaskFailed (500) for a failed one. */
export function restStatus(status: MultimediaStatus) {
  if (status.state === "failed") throw new TaskFailed();
  const complete = status.state === "complete";
  return { ...serialize(STATUS_KEYS, status), ...(complete ? resultFields(status.result!) : {}) };
}

/** The body the REST status endpoint gives for the job: its 200 body, or for a failed job its 500 body. */
export function restStatusBody(status: MultimediaStatus): Record<string, unknown> {
  if (status.state === "failed") return { success: false, error: new TaskFailed().message };
  return restStatus(status);
}
