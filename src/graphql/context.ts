/**
 * What every resolver receives. The kit declares the shape and the members that belong to no
 * feature; each feature adds its own services and loaders to `ResolverServices` and `Loaders` from
 * its `*.graphql.ts` (`declare module "../graphql/context.ts"`), so that this kit, which the features
 * stand on, imports none of them. The gateway (src/gateway) makes the context.
 */
import type { PubSub } from "../events/bus.ts";
import type { Principal } from "../auth/principal.ts";
import type { ExecutionBudget } from "./budget.ts";

/**
 * What resolvers use of the process's services, and nothing more: no database client, no job queue,
 * no worker. The composition root's `Services` satisfies it. Features add their members.
 */
export interface ResolverServices {
  pubsub: PubSub;
}

/** Each feature's per-request loaders, under the feature's name. Features add their members. */
// biome-ignore lint/suspicious/noEmptyInterface: empty here by design; each feature declares its members into it
export interface Loaders {}

/** What every resolver receives: the checked caller, the domain services, per-request loaders, the operation's budget. */
export interface GraphQLContext {
  principal: Principal;
  services: ResolverServices;
  budget: ExecutionBudget;
  loaders: Loaders;
}
