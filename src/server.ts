import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type Express, type NextFunction, type Request, type Response, type Router } from "express";
import type { Admission } from "./admission/admission.ts";
import { upgradeAddress } from "./admission/client-address.ts";
import { oauthRouter } from "./auth/oauth.rest.ts";
import { buildGatewaySchema } from "./gateway/schema.ts";
import { createGraphQLEndpoint, type GraphQLEndpoint } from "./gateway/graphql.ts";
import { openApiDocument } from "./gateway/openapi.ts";
import { locationTypeRouter } from "./locations/location-type.rest.ts";
import { locationRouter } from "./locations/location.rest.ts";
import { restErrorHandler, sendError, unknownPath, type ErrorShape } from "./rest/errors.ts";
import { corsPolicy } from "./rest/cors.ts";
import { refuseCrossSiteWrites } from "./rest/cross-site.ts";
import { admit } from "./rest/middleware.ts";
import { caseRouter } from "./cases/case.rest.ts";
import { dashboardRouter, ideSignInThroughProvider } from "./dashboard/dashboard.static.ts";
import { homeRouter } from "./home/home.rest.ts";
import { appRouter } from "./apps/app.rest.ts";
import { multimediaRouter } from "./multimedia/multimedia.rest.ts";
import { openApiRouter } from "./openapi/openapi.rest.ts";
import type { Services } from "./services.ts";
import type { Config } from "./config.ts";
import type { Database } from "./db/client.ts";
import { schemaBehind } from "./errors.ts";
import { databaseMetricSources, databaseProbes } from "./observability/probes.ts";
import { probeRouter } from "./observability/health.ts";
import { watchEventLoop } from "./observability/event-loop.ts";
import { markRoute, observeRequests } from "./observability/http.ts";
import { setMetricSources } from "./observability/metrics.ts";
import { metricsRouter } from "./observability/metrics.rest.ts";
import { traceRequests } from "./observability/tracing.ts";
import { isStopping, requestDrain } from "./shutdown.ts";

/**
 * One REST family of CONTRACT §2–4 under /a/{domain}/…: admission (authentication, the caller's rate
 * limit in that domain), the feature's routes (whose services check the domain permission of each operation),
 * then JSON 404s and errors in the family's body shape.
 */
interface Family {
  path: string;
  shape: ErrorShape;
  routes: Router;
}

function mountFamily(app: Express, admission: Admission, family: Family): void {
  const router = express.Router({ mergeParams: true });
  router.use(markRoute(family.path), admit(admission), family.routes, unknownPath(family.shape), restErrorHandler(family.shape));
  app.use(family.path, router);
}

const APPS_PATH = /^\/a\/[^/]+\/apps\/api(\/|$|\?)/;

export interface HttpServer {
  app: Express;
  httpServer: Server;
  listen(port: number, host: string): Promise<string>;
  /**
   * Stops accepting connections, lets in-flight requests finish (those still running after
   * `graceMs`, by default SHUTDOWN_GRACE_SECONDS, are cut), then closes the WebSockets (1001 Going
   * Away) and stops Apollo.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * The whole server over `services`. Given `httpServer` (already listening, see `notReadyApp`), the
 * caller routes its requests to `app` once this returns; otherwise a new server does so from the
 * start and `listen` opens it.
 */
export async function buildServer(services: Services, existing?: Server): Promise<HttpServer> {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  // TRUST_PROXY: req.protocol and req.host follow X-Forwarded-Proto/-Host (absolute URLs, the
  // cross-site check), and req.ip the client the proxy saw (the failed-login throttle; WebSocket
  // upgrades read it through this app too: upgradeAddress). One hop only: with `true` express
  // would take the left-most X-Forwarded-For entry, which the client writes itself, and a guesser
  // could name a new address on every attempt.
  app.set("trust proxy", services.config.trustProxy ? 1 : false);
  const httpServer = existing ?? createServer(app);
  const drain = requestDrain(httpServer);
  let closing = false;
  const stopWatchingEventLoop = watchEventLoop();

  // CONTRACT §7.2: every request gets its id, access log line, metrics (and span, with tracing);
  // the probes and /metrics answer before any authentication or rate limit.
  app.use(observeRequests(), traceRequests());
  const probes = databaseProbes(services.db, { stopping: () => closing || isStopping(), redis: services.redis });
  // an object store (BLOB_STORE_URL) is a dependency like the database: checked only when there is one
  const blobs = services.blobs;
  if (blobs.check) probes.checks.objectStore = () => blobs.check!();
  app.use(probeRouter(probes));
  setMetricSources(databaseMetricSources(services.db));
  app.use(metricsRouter(services.config.metricsToken));

  const schema = await buildGatewaySchema({ federation: services.config.federation });
  // REST, GraphQL over HTTP and WebSocket pass through one admission (and share one rate limit)
  const { admission } = services;
  const { publicUrl, corsOrigins } = services.config;
  const addressOf = (request: IncomingMessage) => upgradeAddress(app, request);
  const graphql: GraphQLEndpoint = await createGraphQLEndpoint(
    schema,
    services,
    httpServer,
    admission,
    addressOf,
    ideSignInThroughProvider(services.oidc),
  );

  // CORS first: a listed origin's preflight is answered before any authentication, and every
  // answer to it (errors too) carries its Access-Control-Allow-Origin
  app.use(corsPolicy(corsOrigins));
  // the REST API's OpenAPI document and its browsable page: no authentication (CONTRACT §7.2)
  app.use(openApiRouter(openApiDocument));
  app.use(oauthRouter(services.oauth, services.config.bodyLimitBytes));
  app.use("/graphql", markRoute("/graphql"));
  app.use(graphql.router);
  app.use("/dashboard", dashboardRouter(services.oidc));
  app.use(homeRouter({ graphqlIde: services.config.graphqlIde }));
  // A page on another site may not write through REST with the browser's cached credentials
  // (CSRF), refused before any family admits it (the last handler gives the family's body shape).
  // The origins CORS_ORIGINS lists may: their pages send their own Authorization header.
  app.use("/a", refuseCrossSiteWrites({ publicUrl, trustedOrigins: corsOrigins }));
  mountFamily(app, admission, {
    path: "/a/:domain/api/case/v2",
    shape: "plain",
    routes: caseRouter({
      caseReads: services.caseReads,
      caseWrites: services.caseWrites,
      bodyLimitBytes: services.config.bodyLimitBytes,
      publicUrl,
    }),
  });
  mountFamily(app, admission, {
    path: "/a/:domain/api/location/v2",
    shape: "plain",
    routes: locationRouter({ locations: services.locations, bodyLimitBytes: services.config.bodyLimitBytes }),
  });
  mountFamily(app, admission, {
    path: "/a/:domain/api/location_type/v1",
    shape: "plain",
    routes: locationTypeRouter({ locationTypes: services.locationTypes }),
  });
  const uploads = {
    uploadTempDir: () => services.blobs.tempDir(),
    uploadLimitBytes: services.config.uploadLimitBytes,
    formFieldsLimitBytes: services.config.bodyLimitBytes,
  };
  mountFamily(app, admission, {
    path: "/a/:domain/apps/api",
    shape: "apps",
    // the family's two features: the import (apps), then the multimedia routes
    routes: express
      .Router({ mergeParams: true })
      .use(
        appRouter({ apps: services.apps, ...uploads, appSourceLimitBytes: services.config.appSourceLimitBytes }),
        multimediaRouter({ multimedia: services.multimediaJobs, ...uploads }),
      ),
  });

  app.use(unknownPath("plain"));
  // Errors raised before a family is entered (e.g. an undecodable domain) still get its body shape.
  app.use((error: unknown, req: Request, res: Response, next: NextFunction) =>
    restErrorHandler(APPS_PATH.test(req.originalUrl) ? "apps" : "plain")(error, req, res, next),
  );

  return {
    app,
    httpServer,
    listen(port, host) {
      if (httpServer.listening) return Promise.resolve(urlOf(httpServer));
      return new Promise((resolve, reject) => {
        httpServer.once("error", reject);
        httpServer.listen(port, host, () => resolve(urlOf(httpServer)));
      });
    },
    async close(graceMs = services.config.shutdownGraceSeconds * 1000) {
      closing = true;
      stopWatchingEventLoop();
      // Requests first, within the grace (the one drain of the HTTP server: Apollo's own drain
      // plugin, which cuts requests after a fixed 10 s, is not used); then graphql.dispose() closes
      // the WebSockets (1001) and stops Apollo.
      await drain(graceMs);
      await graphql.dispose();
    },
  };
}

/** The URL a listening server answers on. */
export function urlOf(httpServer: Server): string {
  const address = httpServer.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `http://${shownHost}:${address.port}`;
}

/**
 * CONTRACT §7.5: what a process serves while its schema is behind and it may not migrate
 * (MIGRATE_ON_START=false): the probes (`/readyz` 503 naming the pending `migrations` check) and
 * `/metrics`, and a 503 for everything else, so that no request runs against a schema this code
 * does not know. main.ts swaps in the whole server once the migrations are applied.
 */
export function notReadyApp(db: Database, config: Pick<Config, "metricsToken">): Express {
  const app = express();
  app.disable("x-powered-by");
  app.use(observeRequests());
  const probes = databaseProbes(db, { stopping: isStopping });
  // never ready: once the schema is current the whole server is being built, and it answers next
  const migrations = probes.checks.migrations!;
  probes.checks.migrations = async () => {
    const state = await migrations();
    return state === true ? "starting" : state;
  };
  app.use(probeRouter(probes));
  app.use(metricsRouter(config.metricsToken));
  app.use((req: Request, res: Response) => sendError(res, schemaBehind(), APPS_PATH.test(req.originalUrl) ? "apps" : "plain"));
  return app;
}
