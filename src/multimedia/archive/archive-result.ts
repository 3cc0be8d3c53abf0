import type { MediaType } from "../../apps/references.ts";

/**
 * What processing an archive yields (CONTRACT §4 "Processing"): the result a complete job keeps
 * (stored as jsonb) and reports, and the files it stored for the app's map.
 */

export interface MatchedFile {
  path: string;
  original_path: string;
  md5: string;
  size: number;
  content_type: string;
}

export interface ArchiveResult {
  matched_count: number;
  unmatched_count: number;
  total_files: number;
  processed_files: number;
  image_count: number;
  audio_count: number;
  video_count: number;
  matched_files: Record<"AppImage" | "AppAudio" | "AppVideo", MatchedFile[]>;
  unmatched_files: { path: string; reason: string }[];
  skipped_files: { path: string; reason: string }[];
}

/** The result of an archive with nothing in it, which processing fills in. */
export function emptyArchiveResult(): ArchiveResult {
  return {
    matched_count: 0,
    unmatched_count: 0,
    total_files: 0,
    processed_files: 0,
    image_count: 0,
    audio_count: 0,
    video_count: 0,
    matched_files: { AppImage: [], AppAudio: [], AppVideo: [] },
    unmatched_files: [],
    skipped_files: [],
  };
}

export interface StoredMedia {
  canonicalPath: string;
  mediaType: MediaType;
  fileId: string;
  sha256: string;
}
