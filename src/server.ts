import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type Express, type NextFunction, type Request, type Response, type Router } from "express";
import { oauthRouter } from "./auth/oauth.rest.ts";
import { buildGatewaySchema } from "./graphql/schema.ts";
import { createGraphQLEndpoint, type GraphQLEndpoint } from "./graphql/server.ts";
import { locationTypeRouter } from "./locations/location-type.rest.ts";
import { locationRouter } from "./locations/location.rest.ts";
import { restErrorHandler, unknownPath, type ErrorShape } from "./rest/errors.ts";
import { authenticate } from "./rest/middleware.ts";
import { caseRouter } from "./cases/case.rest.ts";
import { restRateLimit } from "./rate-limit/rate-limit.rest.ts";
import { RateLimiter } from "./rate-limit/rate-limit.service.ts";
import { appRouter } from "./apps/app.rest.ts";
import type { Services } from "./services.ts";

/**
 * One REST family of CONTRACT §2–4 under /a/{domain}/…: authentication, the caller's rate limit in
 * that domain, the feature's routes (whose services check the domain permission of each operation),
 * then JSON 404s and errors in the family's body shape.
 */
interface Family {
  path: string;
  shape: ErrorShape;
  routes: Router;
}

function mountFamily(app: Express, services: Services, rateLimiter: RateLimiter, family: Family): void {
  const router = express.Router({ mergeParams: true });
  router.use(
    authenticate(services.authenticator),
    restRateLimit(rateLimiter),
    family.routes,
    unknownPath(family.shape),
    restErrorHandler(family.shape),
  );
  app.use(family.path, router);
}

const APPS_PATH = /^\/a\/[^/]+\/apps\/api(\/|$|\?)/;

export interface HttpServer {
  app: Express;
  httpServer: Server;
  listen(port: number, host: string): Promise<string>;
  /** stops accepting connections, lets in-flight requests finish, closes subscriptions */
  close(): Promise<void>;
}

export async function buildServer(services: Services): Promise<HttpServer> {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  const httpServer = createServer(app);

  const schema = await buildGatewaySchema();
  // one limiter for every face of this process; in PostgreSQL mode its counters are shared by all
  const rateLimiter = RateLimiter.create(services.config, services.db);
  const graphql: GraphQLEndpoint = await createGraphQLEndpoint(schema, services, httpServer, rateLimiter);

  app.use(oauthRouter(services.oauth, services.config.bodyLimitBytes));
  app.use(graphql.router);
  mountFamily(app, services, rateLimiter, {
    path: "/a/:domain/api/case/v2",
    shape: "plain",
    routes: caseRouter({ caseReads: services.caseReads, caseWrites: services.caseWrites, bodyLimitBytes: services.config.bodyLimitBytes }),
  });
  mountFamily(app, services, rateLimiter, {
    path: "/a/:domain/api/location/v2",
    shape: "plain",
    routes: locationRouter(services),
  });
  mountFamily(app, services, rateLimiter, {
    path: "/a/:domain/api/location_type/v1",
    shape: "plain",
    routes: locationTypeRouter(services),
  });
  mountFamily(app, services, rateLimiter, { path: "/a/:domain/apps/api", shape: "apps", routes: appRouter(services) });

  app.use(unknownPath("plain"));
  // Errors raised before a family is entered (e.g. an undecodable domain) still get its body shape.
  app.use((error: unknown, req: Request, res: Response, next: NextFunction) =>
    restErrorHandler(APPS_PATH.test(req.originalUrl) ? "apps" : "plain")(error, req, res, next),
  );

  return {
    app,
    httpServer,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        httpServer.once("error", reject);
        httpServer.listen(port, host, () => {
          const address = httpServer.address() as AddressInfo;
          const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
          resolve(`http://${shownHost}:${address.port}`);
        });
      });
    },
    async close() {
      rateLimiter.close();
      await graphql.dispose();
      await new Promise<void>((resolve) => {
        if (!httpServer.listening) return resolve();
        httpServer.close(() => resolve());
        httpServer.closeIdleConnections();
      });
    },
  };
}
