import type { AdminService } from "../admin/admin.service.ts";
import { createAppLoaders, type AppLoaders } from "../apps/app.loaders.ts";
import type { AppService } from "../apps/app.service.ts";
import type { CaseReads } from "../cases/case.read.service.ts";
import type { CaseWrites } from "../cases/case.write.service.ts";
import type { PubSub } from "../events/bus.ts";
import type { LocationTypeService } from "../locations/location-type.service.ts";
import type { LocationService } from "../locations/location.service.ts";
import type { BlobStore } from "../multimedia/blob-store.ts";
import type { MultimediaJobService } from "../multimedia/job.service.ts";
import type { Principal } from "../auth/principal.ts";
import { createCaseLoaders, type CaseLoaders } from "../cases/case.loaders.ts";
import { createLocationLoaders, type LocationLoaders } from "../locations/location.loaders.ts";
import { ExecutionBudget, type BudgetLimits } from "./budget.ts";
import { createMultimediaLoaders, type MultimediaLoaders } from "../multimedia/multimedia.loaders.ts";

/**
 * What resolvers use of the process's services, and nothing more: no database client, no job queue,
 * no worker. The composition root's `Services` satisfies it.
 */
export interface ResolverServices {
  admin: AdminService;
  apps: AppService;
  /** where an upload is spooled before the service reads it */
  blobs: Pick<BlobStore, "tempDir">;
  caseReads: CaseReads;
  caseWrites: CaseWrites;
  locations: LocationService;
  locationTypes: LocationTypeService;
  multimediaJobs: MultimediaJobService;
  pubsub: PubSub;
}

/** What every resolver receives: the checked caller, the domain services, per-request loaders, the operation's budget. */
export interface GraphQLContext {
  principal: Principal;
  services: ResolverServices;
  budget: ExecutionBudget;
  loaders: { cases: CaseLoaders; locations: LocationLoaders; apps: AppLoaders; multimedia: MultimediaLoaders };
}

type Loaders = GraphQLContext["loaders"];

/**
 * Each feature's loaders are made on first use: a subscription (which keeps its context for as long
 * as it is live) or a query touching one feature builds only what it reads.
 */
function lazyLoaders(make: { [K in keyof Loaders]: () => Loaders[K] }): Loaders {
  const made: Partial<Loaders> = {};
  const loaders = {} as Loaders;
  for (const key of Object.keys(make) as (keyof Loaders)[]) {
    Object.defineProperty(loaders, key, {
      enumerable: true,
      get: () => (made[key] ??= make[key]() as never),
    });
  }
  return loaders;
}

export function createContext(principal: Principal, services: ResolverServices, limits: BudgetLimits): GraphQLContext {
  return {
    principal,
    services,
    budget: new ExecutionBudget(limits),
    loaders: lazyLoaders({
      cases: () => createCaseLoaders(principal, services.caseReads),
      locations: () => createLocationLoaders(principal, services.locations),
      apps: () => createAppLoaders(services.apps),
      multimedia: () => createMultimediaLoaders(services.multimediaJobs),
    }),
  };
}
