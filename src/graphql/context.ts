import { createAppLoaders, type AppLoaders } from "../apps/app.loaders.ts";
import type { Principal } from "../auth/principal.ts";
import { createCaseLoaders, type CaseLoaders } from "../cases/case.loaders.ts";
import { createLocationLoaders, type LocationLoaders } from "../locations/location.loaders.ts";
import { createMultimediaLoaders, type MultimediaLoaders } from "../multimedia/multimedia.loaders.ts";
import { domainIdLoader } from "./domain-loader.ts";
import type { Services } from "../services.ts";

/** What every resolver receives: the checked caller, the domain services, per-request loaders. */
export interface GraphQLContext {
  principal: Principal;
  services: Services;
  loaders: { cases: CaseLoaders; locations: LocationLoaders; apps: AppLoaders; multimedia: MultimediaLoaders };
}

export function createContext(principal: Principal, services: Services): GraphQLContext {
  const domainIds = domainIdLoader(services.domains);
  return {
    principal,
    services,
    loaders: {
      cases: createCaseLoaders(services.caseReads.repositories, domainIds),
      locations: createLocationLoaders(principal, services.locations),
      apps: createAppLoaders(services.apps),
      multimedia: createMultimediaLoaders(services.multimediaJobs),
    },
  };
}
