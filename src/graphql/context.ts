import type { Principal } from "../auth/principal.ts";
import type { Services } from "../services.ts";

/** What every resolver receives: the checked caller and the domain services. */
export interface GraphQLContext {
  principal: Principal;
  services: Services;
}
