import { DomainError } from "../errors.ts";
import type { ArchiveResult, MatchedFile } from "./archive/archive-result.ts";
import { progressPercent, type MultimediaStatus } from "./job.events.ts";

/**
 * The multimedia status record of CONTRACT §4 "GET {app_id}/multimedia/status/{processing_id}/":
 * `success, complete, in_queue, progress {percent, current, total}, errors, processing_id`, then
 * the result fields only once complete, every key in the contract's order. A failed job has no
 * record: REST answers 500.
 */

export class TaskFailed extends DomainError {
  constructor() {
    super("INTERNAL_SERVER_ERROR", "Multimedia processing task failed");
  }
}

/**
 * The result fields in the contract's order. A stored result is jsonb, which keeps no key order,
 * so it is rebuilt key by key.
 */
export function resultFields(r: ArchiveResult) {
  const file = (f: MatchedFile) => ({
    path: f.path,
    original_path: f.original_path,
    md5: f.md5,
    size: f.size,
    content_type: f.content_type,
  });
  const reasoned = (f: { path: string; reason: string }) => ({ path: f.path, reason: f.reason });
  return {
    matched_count: r.matched_count,
    unmatched_count: r.unmatched_count,
    total_files: r.total_files,
    processed_files: r.processed_files,
    image_count: r.image_count,
    audio_count: r.audio_count,
    video_count: r.video_count,
    matched_files: {
      AppImage: r.matched_files.AppImage.map(file),
      AppAudio: r.matched_files.AppAudio.map(file),
      AppVideo: r.matched_files.AppVideo.map(file),
    },
    unmatched_files: r.unmatched_files.map(reasoned),
    skipped_files: r.skipped_files.map(reasoned),
  };
}

/** The REST status body of a job, or TaskFailed (500) for a failed one. */
export function restStatus(status: MultimediaStatus) {
  if (status.state === "failed") throw new TaskFailed();
  const complete = status.state === "complete";
  return {
    success: true,
    complete,
    in_queue: !complete,
    progress: { percent: progressPercent(status), current: status.current, total: status.total },
    errors: status.errors,
    processing_id: status.id,
    ...(complete ? resultFields(status.result!) : {}),
  };
}

/** The body the REST status endpoint gives for the job: its 200 body, or for a failed job its 500 body. */
export function restStatusBody(status: MultimediaStatus): Record<string, unknown> {
  if (status.state === "failed") return { success: false, error: new TaskFailed().message };
  return restStatus(status);
}
