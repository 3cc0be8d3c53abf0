import { getOrCreate } from "../util/maps.ts";
import { GraphQLUpload, type FileUpload } from "graphql-upload-ts";
import type { GraphQLResolveInfo } from "graphql";
import { Arg, Ctx, FieldResolver, ID, Info, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import { toAppNode } from "../apps/app.resolver.ts";
import type { AppRecord } from "../apps/app.service.ts";
import { AppType, type AppNode } from "../apps/app.types.ts";
import { connectionCost, connectionOf, ListCursors, pageOf, sliceOf, type ConnectionBound, type ConnectionValue } from "../graphql/connection.ts";
import type { GraphQLContext } from "../graphql/context.ts";
import { withReceivedUpload } from "../graphql/file-upload.ts";
import { globalId, type NodeFetcher, type NodeTypeName } from "../graphql/node.ts";
import { JSONObjectScalar } from "../graphql/scalars.ts";
import { isUuid } from "../util/ids.ts";
import type { ArchiveResult } from "./archive/archive-result.ts";
import { JobFeed } from "./job.coalescing.ts";
import { progressPercent, type JobState, type MultimediaStatus } from "./job.events.ts";
import { positionOf, type HistoryJob, type JobPosition } from "./job.history.ts";
import { restStatusBody } from "./job.serializer.ts";
import type { MediaFile, MultimediaScope } from "./job.service.ts";
import { MEDIA_CLASS } from "./archive/media-types.ts";
import {
  MediaClass,
  MultimediaFileType,
  MultimediaJobConnectionType,
  MultimediaJobResultType,
  MultimediaJobState,
  MultimediaJobType,
  MultimediaReferenceType,
  MultimediaUploaderType,
} from "./multimedia.types.ts";

/**
 * GraphQL twin of the Import App API's multimedia (CONTRACT §5, §7.3, §7.4): upload (multipart
 * request spec), jobs typed for dashboards, their history as a connection, live feeds of one job
 * and of a domain's jobs (progress coalesced), and the App type's multimedia fields. The same
 * scoped services as REST; `restStatus` is the REST body itself, from the same serializer.
 */

/** What a MultimediaJob field resolves from: the typed fields, and the status they came from. */
export type JobNode = Omit<MultimediaJobType, "restStatus" | "result"> & { status: MultimediaStatus; domain: string };

/** A date of a status, which is a string once an event crossed the PostgreSQL bus. */
const asDate = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

function toJob(status: MultimediaStatus, domain: string): JobNode {
  const complete = status.state === "complete";
  return {
    status,
    domain,
    processingId: status.id,
    state: status.state as MultimediaJobState,
    complete,
    inQueue: !complete,
    failed: status.state === "failed",
    fileName: status.fileName,
    sizeBytes: status.sizeBytes,
    createdAt: asDate(status.createdAt)!,
    startedAt: asDate(status.startedAt),
    finishedAt: asDate(status.finishedAt),
    attempts: status.attempts,
    progress: { percent: progressPercent(status), current: status.current, total: status.total },
    errors: status.errors.map(String),
  };
}

/** The REST media class names, back to the domain's media types. */
const CLASS_OF = Object.fromEntries(Object.entries(MEDIA_CLASS).map(([type, name]) => [name, type as MediaClass])) as Record<string, MediaClass>;

function typedResult(r: ArchiveResult): MultimediaJobResultType {
  return {
    totalFiles: r.total_files,
    processedFiles: r.processed_files,
    matchedCount: r.matched_count,
    unmatchedCount: r.unmatched_count,
    imageCount: r.image_count,
    audioCount: r.audio_count,
    videoCount: r.video_count,
    matchedFiles: (["AppImage", "AppAudio", "AppVideo"] as const).flatMap((name) =>
      r.matched_files[name].map((f) => ({
        path: f.path,
        originalPath: f.original_path,
        mediaClass: CLASS_OF[name]!,
        md5: f.md5,
        size: f.size,
        contentType: f.content_type,
      })),
    ),
    unmatchedFiles: r.unmatched_files.map((f) => ({ path: f.path, reason: f.reason })),
    skippedFiles: r.skipped_files.map((f) => ({ path: f.path, reason: f.reason })),
  };
}

function mediaFile(file: MediaFile): Omit<FileNode, "domain"> {
  return {
    fileId: file.id,
    sha256: file.sha256,
    md5: file.md5,
    size: file.size,
    contentType: file.contentType,
    mediaClass: CLASS_OF[file.mediaClass]!,
    blobKey: file.blobKey,
  };
}

/** What a MultimediaFile field resolves from: the file, where its bytes are kept and the name of its domain. */
type FileNode = MultimediaFileType & { domain: string; blobKey: string };

/** The caller's multimedia scope of the domain, opened once per request and domain (shared with the loaders). */
const scopeOf = (ctx: GraphQLContext, domain: string): Promise<MultimediaScope> => ctx.loaders.multimedia.scope(domain);

/** Pages of the job history (CONTRACT §7.4). */
const JOB_PAGES: ConnectionBound = { defaultSize: 20, maxSize: 500 };

@Resolver(() => MultimediaJobType)
export class MultimediaResolver {
  @Query(() => MultimediaJobType, { description: "A multimedia job of the domain by its processing id, while the history keeps it (edit_apps)." })
  async multimediaJob(
    @Arg("domain", () => String, { description: "the domain the job belongs to" }) domain: string,
    @Arg("processingId", () => ID, { description: "the REST processing_id" }) processingId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<JobNode> {
    return toJob(await (await scopeOf(ctx, domain)).job(processingId), domain);
  }

  @Query(() => MultimediaJobConnectionType, {
    description:
      "The domain's multimedia uploads, newest first, kept for MULTIMEDIA_JOB_HISTORY_DAYS whatever the REST status's expiry (edit_apps). A Relay connection: `first`/`after` or `last`/`before`.",
    complexity: connectionCost(JOB_PAGES),
  })
  async multimediaJobs(
    @Arg("domain", () => String, { description: "the domain whose uploads to list" }) domain: string,
    @Arg("appId", () => ID, { nullable: true, description: "only this application's uploads" }) appId: string | null,
    @Arg("states", () => [MultimediaJobState], { nullable: true, description: "only jobs in one of these states" }) states:
      | MultimediaJobState[]
      | null,
    @Arg("first", () => Int, {
      nullable: true,
      description: `the newest jobs after \`after\`, this many (default ${JOB_PAGES.defaultSize}, at most ${JOB_PAGES.maxSize})`,
    })
    first: number | null,
    @Arg("after", () => String, { nullable: true, description: "an edge's cursor: the jobs older than that edge" }) after: string | null,
    @Arg("last", () => Int, { nullable: true, description: `the oldest jobs before \`before\`, this many (at most ${JOB_PAGES.maxSize})` }) last:
      | number
      | null,
    @Arg("before", () => String, { nullable: true, description: "an edge's cursor: the jobs newer than that edge" }) before: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ConnectionValue<JobNode>> {
    const scope = await scopeOf(ctx, domain);
    const filter = { appId: appId ?? undefined, states: states ? ([...new Set(states)].sort() as JobState[]) : undefined };
    const cursors = new ListCursors(ListCursors.fingerprint({ domain: scope.domain.id, ...filter, orderBy: "createdAt desc, id desc" }));
    const slice = sliceOf<JobPosition>({ first, after, last, before }, JOB_PAGES, (cursor, argument) => cursors.decode(cursor, argument, positionOf));
    const read = await scope.jobs(filter, slice);
    return connectionOf(
      pageOf(slice, read.rows, read.outside),
      read.total,
      (row: HistoryJob) => toJob(row.status, domain),
      (row) => cursors.encode([row.position.createdUs, row.position.id]),
    );
  }

  @Mutation(() => ID, { description: "POST {app_id}/multimedia/: the processing id of the queued job" })
  async uploadMultimedia(
    @Arg("domain", () => String, { description: "the domain of the application" }) domain: string,
    @Arg("appId", () => ID, { description: "the application the archive's files are for" }) appId: string,
    @Arg("file", () => GraphQLUpload, { description: "the ZIP archive (the REST bulk_upload_file)" }) file: Promise<FileUpload>,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string> {
    const app = await (await scopeOf(ctx, domain)).app(appId); // 403 / 404 before the upload is read
    const intake = await app.intake();
    return withReceivedUpload(file, intake.receive, (staged, filename) => app.upload({ staged, filename }));
  }

  @Subscription(() => MultimediaJobType, {
    description: "the job's state now, then every change (progress coalesced to PROGRESS_EVENTS_PER_SECOND), ending with the final result",
    // The refusal (403, 404) comes before the stream exists: thrown from inside a running
    // generator, graphql-ws would report it without its code.
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphQLContext;
      const scope = await scopeOf(ctx, args.domain);
      const feed = jobFeed(ctx, scope, (status) => status.id === args.processingId, true);
      try {
        return feed.start(heard(await scope.job(args.processingId), scope));
      } catch (error) {
        await feed.return();
        throw error;
      }
    },
  })
  multimediaProgress(
    @Root() status: MultimediaStatus,
    @Arg("domain", () => String, { description: "the domain the job belongs to" }) domain: string,
    @Arg("processingId", () => ID, { description: "the REST processing_id" }) _processingId: string,
  ): JobNode {
    return toJob(status, domain);
  }

  @Subscription(() => MultimediaJobType, {
    name: "multimediaJobs",
    description:
      "Every change of every upload of the domain (or of one application), from any process: a new upload as it is queued (state QUEUED), each state change, progress (coalesced to PROGRESS_EVENTS_PER_SECOND per job) and the final result (edit_apps).",
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphQLContext;
      const scope = await scopeOf(ctx, args.domain);
      const appId: string | null = args.appId ?? null;
      if (appId !== null) await scope.app(appId); // 404 for an application the domain does not have
      return jobFeed(ctx, scope, (status) => appId === null || status.appId === appId, false).start();
    },
  })
  multimediaJobFeed(
    @Root() status: MultimediaStatus,
    @Arg("domain", () => String, { description: "the domain whose uploads to follow" }) domain: string,
    @Arg("appId", () => ID, { nullable: true, description: "only this application's uploads" }) _appId: string | null,
  ): JobNode {
    return toJob(status, domain);
  }

  @FieldResolver(() => ID, { description: "An opaque global id, unique across every type; `Query.node` takes it." })
  id(@Root() job: JobNode): string {
    return globalId("MultimediaJob", job.domain, job.processingId);
  }

  @FieldResolver(() => AppType, { nullable: true, description: "the application the archive was uploaded to (null once it is deleted)" })
  async app(@Root() job: JobNode, @Ctx() ctx: GraphQLContext, @Info() info: GraphQLResolveInfo): Promise<AppNode | null> {
    const app =
      info.operation.operation === "subscription"
        ? await appOfEvent(job.status, ctx, job.domain)
        : await ctx.loaders.apps.app({ appId: job.status.appId, domain: job.domain });
    return app && toAppNode(app, job.domain);
  }

  @FieldResolver(() => MultimediaUploaderType, {
    nullable: true,
    description: "who uploaded the archive (null for uploads from before it was recorded)",
  })
  uploadedBy(@Root() job: JobNode): MultimediaUploaderType | null {
    return job.status.uploadedBy === null ? null : { username: job.status.uploadedBy };
  }

  @FieldResolver(() => MultimediaJobResultType, { nullable: true, description: "what the processing did, once complete" })
  result(@Root() job: JobNode): MultimediaJobResultType | null {
    return job.status.state === "complete" && job.status.result ? typedResult(job.status.result) : null;
  }

  @FieldResolver(() => JSONObjectScalar, {
    description: "the exact body the REST status endpoint gives for this job, keys in the contract's order (a failed job: its 500 body)",
  })
  restStatus(@Root() job: JobNode): Record<string, unknown> {
    return restStatusBody(job.status);
  }
}

/**
 * The app of a job event, read once per event and process: the bus hands the same status object
 * to every subscription of the process, so 5,000 dashboards following a domain cost one query per
 * event, not 5,000 at once (which overran the connection pool), and no subscription keeps a copy
 * of the app (nor a stale one) for its whole life. It is read through the scope of a subscription
 * that heard the event: each event's execution has a fresh context (subscription-events.ts), whose
 * own scope would cost a permission check per event and subscriber. Every subscription hearing the
 * event checked its domain at subscribe.
 */
const appsOfEvents = new WeakMap<MultimediaStatus, Promise<AppRecord | null>>();
/** the app look-up of a subscription that heard the event (any one: they are all of its domain) */
const scopesOfEvents = new WeakMap<MultimediaStatus, Pick<MultimediaScope, "findApp">>();
function appOfEvent(status: MultimediaStatus, ctx: GraphQLContext, domain: string): Promise<AppRecord | null> {
  return getOrCreate(appsOfEvents, status, () => {
    const heardBy = scopesOfEvents.get(status);
    return heardBy ? heardBy.findApp(status.appId) : ctx.loaders.apps.app({ appId: status.appId, domain });
  });
}

/** Remembers that `scope` heard the event (the first scope of the process to hear it). */
function heard(status: MultimediaStatus, scope: Pick<MultimediaScope, "findApp">): MultimediaStatus {
  if (!scopesOfEvents.has(status)) scopesOfEvents.set(status, scope);
  return status;
}

/** The domain's job events the feed accepts, listened to from now on, coalesced for one subscription. */
function jobFeed(ctx: GraphQLContext, scope: MultimediaScope, accept: (status: MultimediaStatus) => boolean, endWhenSettled: boolean): JobFeed {
  const jobs = ctx.services.multimediaJobs;
  // the feed lives as long as the subscription: its closures keep the app look-up, not the whole scope
  const appsOnly = { findApp: scope.findApp };
  const domainId = scope.domain.id;
  return new JobFeed((hear) => jobs.listen(domainId, (status) => hear(heard(status, appsOnly))), {
    perSecond: jobs.progressEventsPerSecond,
    accept,
    endWhenSettled,
  });
}

@Resolver(() => MultimediaFileType)
export class MultimediaFileResolver {
  @FieldResolver(() => ID, { description: "An opaque global id, unique across every type; `Query.node` takes it." })
  id(@Root() file: FileNode): string {
    return globalId("MultimediaFile", file.domain, file.fileId);
  }

  @FieldResolver(() => String, {
    nullable: true,
    description:
      "A pre-signed URL that fetches the file's bytes straight from the object store (BLOB_STORE_URL), valid for S3_PRESIGN_SECONDS after it is given; null when the files are stored by the server itself (then GET {app_id}/multimedia/file/{path} serves them).",
  })
  async downloadUrl(@Root() file: FileNode, @Ctx() ctx: GraphQLContext): Promise<string | null> {
    return (await scopeOf(ctx, file.domain)).downloadUrl(file);
  }
}

/** The App type's multimedia fields: its references with the files mapped to them, and those files. */
@Resolver(() => AppType)
export class AppMultimediaResolver {
  @FieldResolver(() => [MultimediaReferenceType], {
    description: "the jr://file/ paths the current version refers to, each with the file mapped to it",
  })
  async multimediaReferences(@Root() app: AppNode, @Ctx() ctx: GraphQLContext): Promise<MultimediaReferenceType[]> {
    const [references, files] = await Promise.all([ctx.loaders.apps.references(app), this.files(app, ctx)]);
    const mapped = new Map(Object.entries(app.map).map(([p, v]) => [p.toLowerCase(), v]));
    return references.map((r) => {
      const entry = mapped.get(r.path.toLowerCase());
      const file = entry ? (files.find((f) => f.fileId === entry.fileId) ?? null) : null;
      return { path: r.path, mediaType: r.mediaType as MediaClass, present: Boolean(file), file };
    });
  }

  @FieldResolver(() => [MultimediaFileType], { description: "the uploaded files the app maps" })
  async multimedia(@Root() app: AppNode, @Ctx() ctx: GraphQLContext): Promise<FileNode[]> {
    return this.files(app, ctx);
  }

  private async files(app: AppNode, ctx: GraphQLContext): Promise<FileNode[]> {
    const ids = [...new Set(Object.values(app.map).map((v) => v.fileId))];
    return (await ctx.loaders.multimedia.files(app.domain, ids)).map((f) => ({ ...mediaFile(f), domain: app.domain }));
  }
}

/** Jobs and files for `Query.node`: read through the caller's edit_apps scope of the id's domain. */
export const MULTIMEDIA_NODES: Partial<Record<NodeTypeName, NodeFetcher<GraphQLContext>>> = {
  MultimediaJob: async (ctx, { domain, key }) => toJob(await (await scopeOf(ctx, domain)).job(key), domain),
  MultimediaFile: async (ctx, { domain, key }) => {
    await scopeOf(ctx, domain); // the refusal (403/404) before the id is looked at
    if (!isUuid(key)) return null;
    const [file] = await ctx.loaders.multimedia.files(domain, [key]);
    return file ? { ...mediaFile(file), domain } : null;
  },
};
