import type { Principal } from "../auth/principal.ts";
import { createCaseLoaders, type CaseLoaders } from "../cases/case.loaders.ts";
import type { Services } from "../services.ts";

/** What every resolver receives: the checked caller, the domain services, per-request loaders. */
export interface GraphQLContext {
  principal: Principal;
  services: Services;
  loaders: { cases: CaseLoaders };
}

export function createContext(principal: Principal, services: Services): GraphQLContext {
  return { principal, services, loaders: { cases: createCaseLoaders(services.prisma) } };
}
