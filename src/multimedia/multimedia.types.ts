import { JSONObjectScalar } from "../graphql/scalars.ts";
import { Field, Float, ID, Int, ObjectType, registerEnumType } from "type-graphql";
import { connectionTypes } from "../graphql/connection.ts";
import { NodeInterface } from "../graphql/node.ts";

/** GraphQL shapes of multimedia: the files an app maps, its references, and the upload jobs (CONTRACT §7.3, §7.4). */

/** Media classes; the values are the domain's media types (the REST AppImage/AppAudio/AppVideo and image/audio/video). */
export enum MediaClass {
  IMAGE = "image",
  AUDIO = "audio",
  VIDEO = "video",
}

registerEnumType(MediaClass, {
  name: "MediaClass",
  description: "A multimedia file's class: the REST `AppImage`, `AppAudio` and `AppVideo` (and a reference's image, audio or video).",
  valuesConfig: {
    IMAGE: { description: "an image (REST `AppImage`)" },
    AUDIO: { description: "an audio file (REST `AppAudio`)" },
    VIDEO: { description: "a video (REST `AppVideo`)" },
  },
});

/** A job's states; the values are the domain's. */
export enum MultimediaJobState {
  QUEUED = "queued",
  RUNNING = "running",
  COMPLETE = "complete",
  FAILED = "failed",
}

registerEnumType(MultimediaJobState, {
  name: "MultimediaJobState",
  description: "Where a multimedia upload's processing stands.",
  valuesConfig: {
    QUEUED: { description: "waiting for a worker (also after a restart handed it back)" },
    RUNNING: { description: "a worker is processing the archive" },
    COMPLETE: { description: "processed: the result is there (REST `complete: true`)" },
    FAILED: { description: "the processing failed for good (REST answers 500 `Multimedia processing task failed`)" },
  },
});

@ObjectType("MultimediaFile", {
  implements: NodeInterface,
  description: "A stored multimedia file: its content, kept once per domain and content hash.",
})
export class MultimediaFileType {
  @Field(() => ID, { description: "the stored file's id (the key its global id holds)" })
  fileId!: string;

  @Field(() => String, { description: "the SHA-256 of the content (hex): files are deduplicated on it" })
  sha256!: string;

  @Field(() => String, { description: "the MD5 of the content (hex), as the REST result lists it" })
  md5!: string;

  @Field(() => Float, { description: "the content's size in bytes" })
  size!: number;

  @Field(() => String, { description: "the content's MIME type, from its magic bytes (else its extension)" })
  contentType!: string;

  @Field(() => MediaClass, { description: "the file's media class" })
  mediaClass!: MediaClass;
}

@ObjectType("MultimediaReference", { description: "a jr://file/ path the app refers to" })
export class MultimediaReferenceType {
  @Field(() => String, { description: "the canonical jr://file/ path, as the application spells it first" })
  path!: string;

  @Field(() => MediaClass, { description: "the media class the path's extension (or folder) names" })
  mediaType!: MediaClass;

  @Field(() => Boolean, { description: "whether an uploaded file is mapped to it" })
  present!: boolean;

  @Field(() => MultimediaFileType, { nullable: true, description: "the uploaded file mapped to it, if any" })
  file!: MultimediaFileType | null;
}

@ObjectType("MultimediaProgress", { description: "How far a job has got through its archive's entries." })
export class MultimediaProgressType {
  @Field(() => Int, { description: "floor(100 · current / total); 100 for an empty archive once complete" })
  percent!: number;

  @Field(() => Int, { description: "entries done" })
  current!: number;

  @Field(() => Int, { description: "entries in the archive (directories included)" })
  total!: number;
}

@ObjectType("MultimediaUploader", { description: "Who uploaded an archive." })
export class MultimediaUploaderType {
  @Field(() => String, { description: "the uploader's username" })
  username!: string;
}

@ObjectType("MultimediaMatchedFile", { description: "An archive entry matched to one of the app's references and stored." })
export class MultimediaMatchedFileType {
  @Field(() => String, { description: "the app's reference path the entry was mapped to (REST `path`)" })
  path!: string;

  @Field(() => String, { description: "the entry's path in the archive (REST `original_path`)" })
  originalPath!: string;

  @Field(() => MediaClass, { description: "the media class it was matched as (the REST `matched_files` key it is listed under)" })
  mediaClass!: MediaClass;

  @Field(() => String, { description: "the MD5 of its content (hex)" })
  md5!: string;

  @Field(() => Float, { description: "its size in bytes" })
  size!: number;

  @Field(() => String, { description: "its MIME type (REST `content_type`)" })
  contentType!: string;
}

@ObjectType("MultimediaUnmatchedFile", { description: "An archive entry that was not stored, and why." })
export class MultimediaUnmatchedFileType {
  @Field(() => String, { description: "the entry's path in the archive" })
  path!: string;

  @Field(() => String, { description: "why it was not matched or was skipped, as the REST result says it" })
  reason!: string;
}

@ObjectType("MultimediaJobResult", { description: "What a complete job did with its archive: the REST status's result fields, typed." })
export class MultimediaJobResultType {
  @Field(() => Int, { description: "entries in the archive, directories included (REST `total_files`)" })
  totalFiles!: number;

  @Field(() => Int, { description: "entries processed (REST `processed_files`)" })
  processedFiles!: number;

  @Field(() => Int, { description: "entries matched and stored (REST `matched_count`)" })
  matchedCount!: number;

  @Field(() => Int, { description: "entries not matched (REST `unmatched_count`)" })
  unmatchedCount!: number;

  @Field(() => Int, { description: "images matched (REST `image_count`)" })
  imageCount!: number;

  @Field(() => Int, { description: "audio files matched (REST `audio_count`)" })
  audioCount!: number;

  @Field(() => Int, { description: "videos matched (REST `video_count`)" })
  videoCount!: number;

  @Field(() => [MultimediaMatchedFileType], { description: "the matched files: images, then audio, then video (REST `matched_files`)" })
  matchedFiles!: MultimediaMatchedFileType[];

  @Field(() => [MultimediaUnmatchedFileType], { description: "the entries not matched, with the reason (REST `unmatched_files`)" })
  unmatchedFiles!: MultimediaUnmatchedFileType[];

  @Field(() => [MultimediaUnmatchedFileType], { description: "the entries skipped as not media, with the reason (REST `skipped_files`)" })
  skippedFiles!: MultimediaUnmatchedFileType[];
}

@ObjectType("MultimediaJob", {
  implements: NodeInterface,
  description: "A multimedia upload and its processing, typed for dashboards (CONTRACT §7.4).",
})
export class MultimediaJobType {
  @Field(() => ID, { description: "the processing id (the REST processing_id: dl- and 32 hex digits)" })
  processingId!: string;

  @Field(() => MultimediaJobState, { description: "where the processing stands" })
  state!: MultimediaJobState;

  @Field(() => Boolean, { description: "the job is complete (REST `complete`)" })
  complete!: boolean;

  @Field(() => Boolean, { description: "the job is not complete yet (REST `in_queue`)" })
  inQueue!: boolean;

  @Field(() => Boolean, { description: "the task failed (REST answers 500)" })
  failed!: boolean;

  @Field(() => String, { nullable: true, description: "the archive's file name as uploaded" })
  fileName!: string | null;

  @Field(() => Float, { nullable: true, description: "the archive's size in bytes" })
  sizeBytes!: number | null;

  @Field(() => Date, { description: "when the archive was uploaded (the job queued)" })
  createdAt!: Date;

  @Field(() => Date, { nullable: true, description: "when a worker first started it" })
  startedAt!: Date | null;

  @Field(() => Date, { nullable: true, description: "when it completed or failed" })
  finishedAt!: Date | null;

  @Field(() => Int, { description: "attempts started so far (1 = the first; a crashed attempt is retried)" })
  attempts!: number;

  @Field(() => MultimediaProgressType, { description: "entries done so far" })
  progress!: MultimediaProgressType;

  @Field(() => [String], { description: "why it failed (REST `errors`)" })
  errors!: string[];

  @Field(() => MultimediaJobResultType, { nullable: true, description: "what the processing did, once complete" })
  result!: MultimediaJobResultType | null;

  @Field(() => JSONObjectScalar, {
    description:
      "the exact body the REST status endpoint gives for this job, keys in the contract's order (a failed job: its 500 body), whatever the REST status's expiry",
  })
  restStatus!: Record<string, unknown>;
}

export const { ConnectionType: MultimediaJobConnectionType } = connectionTypes(MultimediaJobType, {
  type: "MultimediaJob",
  items: "multimedia jobs",
  totalCount: "every job of the domain's history (MULTIMEDIA_JOB_HISTORY_DAYS) the filter matches, the same on every page",
});
