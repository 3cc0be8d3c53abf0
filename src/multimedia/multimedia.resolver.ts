import { GraphQLUpload, type FileUpload } from "graphql-upload-ts";
import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import { AppType, type AppNode } from "../apps/app.types.ts";
import type { GraphQLContext } from "../graphql/context.ts";
import { withUpload } from "../graphql/file-upload.ts";
import { MULTIMEDIA_PROGRESS, progressPercent, type MultimediaStatus } from "./job.events.ts";
import { resultFields } from "./job.serializer.ts";
import type { MediaFile } from "./job.service.ts";
import { MultimediaFileType, MultimediaJobType, MultimediaReferenceType } from "./multimedia.types.ts";

/**
 * GraphQL twin of the Import App API's multimedia (CONTRACT §5): upload (multipart request spec),
 * job status and live progress, and the App type's multimedia fields. The same scoped services as
 * REST; a job's status maps straight into MultimediaJob (whose `result` is defined as the REST
 * result fields, in their order).
 */

export function toJob(status: MultimediaStatus): MultimediaJobType {
  const complete = status.state === "complete";
  return {
    processingId: status.id,
    complete,
    inQueue: !complete,
    failed: status.state === "failed",
    progress: { percent: progressPercent(status), current: status.current, total: status.total },
    errors: status.errors.map(String),
    result: complete && status.result ? resultFields(status.result) : null,
  };
}

function mediaFile(file: MediaFile): MultimediaFileType {
  return { id: file.id, sha256: file.sha256, md5: file.md5, size: file.size, contentType: file.contentType, mediaClass: file.mediaClass };
}

const settled = (status: MultimediaStatus) => status.state === "complete" || status.state === "failed";

/**
 * The job's state `now`, then each later change from `events` (whose first is `first`), up to
 * the final one.
 */
async function* progressStream(
  now: MultimediaStatus,
  first: Promise<IteratorResult<MultimediaStatus>>,
  events: AsyncIterator<MultimediaStatus>,
): AsyncGenerator<MultimediaStatus> {
  try {
    yield now;
    if (settled(now)) return;
    for (let next = await first; !next.done; next = await events.next()) {
      // an event older than the state already sent would move the progress backwards
      if (next.value.current < now.current && !settled(next.value)) continue;
      yield next.value;
      if (settled(next.value)) return;
    }
  } finally {
    await events.return?.();
  }
}

@Resolver()
export class MultimediaResolver {
  @Query(() => MultimediaJobType)
  async multimediaJob(
    @Arg("domain", () => String) domain: string,
    @Arg("processingId", () => ID) processingId: string,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MultimediaJobType> {
    return toJob(await (await ctx.services.multimediaJobs.in(ctx.principal, domain)).job(processingId));
  }

  @Mutation(() => ID, { description: "POST {app_id}/multimedia/: the processing id of the queued job" })
  async uploadMultimedia(
    @Arg("domain", () => String) domain: string,
    @Arg("appId", () => ID) appId: string,
    @Arg("file", () => GraphQLUpload) file: Promise<FileUpload>,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string> {
    const app = await (await ctx.services.multimediaJobs.in(ctx.principal, domain)).app(appId); // 403 / 404 before the upload is read
    return withUpload(await ctx.services.blobs.tempDir(), file, (upload) => app.upload(upload));
  }

  @Subscription(() => MultimediaJobType, {
    description: "the job's state now, then every progress change, ending with the final result",
    // The refusal (403, 404) comes before the stream exists: thrown from inside a running
    // generator, graphql-ws would report it without its code.
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphQLContext;
      const events = ctx.services.pubsub.subscribe(MULTIMEDIA_PROGRESS, args.processingId);
      // A Repeater listens from its first next(): ask now, so that no change after the status read is lost.
      const first = events.next();
      try {
        const now = await (await ctx.services.multimediaJobs.in(ctx.principal, args.domain)).job(args.processingId);
        return progressStream(now, first, events);
      } catch (error) {
        await events.return?.();
        throw error;
      }
    },
  })
  multimediaProgress(
    @Root() status: MultimediaStatus,
    @Arg("domain", () => String) _domain: string,
    @Arg("processingId", () => ID) _processingId: string,
  ): MultimediaJobType {
    return toJob(status);
  }
}

/** The App type's multimedia fields: its references with the files mapped to them, and those files. */
@Resolver(() => AppType)
export class AppMultimediaResolver {
  @FieldResolver(() => [MultimediaReferenceType])
  async multimediaReferences(@Root() app: AppNode, @Ctx() ctx: GraphQLContext): Promise<MultimediaReferenceType[]> {
    const [references, files] = await Promise.all([ctx.loaders.apps.references(app), this.files(app, ctx)]);
    const mapped = new Map(Object.entries(app.map).map(([p, v]) => [p.toLowerCase(), v]));
    return references.map((r) => {
      const entry = mapped.get(r.path.toLowerCase());
      const file = entry ? (files.find((f) => f.id === entry.fileId) ?? null) : null;
      return { path: r.path, mediaType: r.mediaType, present: Boolean(file), file };
    });
  }

  @FieldResolver(() => [MultimediaFileType], { description: "the uploaded files the app maps" })
  async multimedia(@Root() app: AppNode, @Ctx() ctx: GraphQLContext): Promise<MultimediaFileType[]> {
    return this.files(app, ctx);
  }

  private async files(app: AppNode, ctx: GraphQLContext): Promise<MultimediaFileType[]> {
    const ids = [...new Set(Object.values(app.map).map((v) => v.fileId))];
    return (await ctx.loaders.multimedia.files(app.domainId, ids)).map(mediaFile);
  }
}
