/**
 * Each request's GraphQL context (the kit's `GraphQLContext`): the caller, the services, a fresh
 * execution budget, and the listed features' loaders, each made on first use.
 */
import type { Principal } from "../auth/principal.ts";
import { ExecutionBudget, type BudgetLimits } from "../graphql/budget.ts";
import type { GraphQLContext, Loaders, ResolverServices } from "../graphql/context.ts";
import type { LoaderFactories } from "../graphql/feature.ts";
import { LOADER_FACTORIES } from "./features.ts";

/**
 * Each feature's loaders are made on first use: a subscription (which keeps its context for as long
 * as it is live) or a query touching one feature builds only what it reads.
 */
function lazyLoaders(principal: Principal, services: ResolverServices, make: LoaderFactories): Loaders {
  const made: Partial<Loaders> = {};
  const loaders = {} as Loaders;
  for (const key of Object.keys(make) as (keyof Loaders)[]) {
    Object.defineProperty(loaders, key, {
      enumerable: true,
      get: () => (made[key] ??= make[key](principal, services) as never),
    });
  }
  return loaders;
}

export function createContext(principal: Principal, services: ResolverServices, limits: BudgetLimits): GraphQLContext {
  return {
    principal,
    services,
    budget: new ExecutionBudget(limits),
    loaders: lazyLoaders(principal, services, LOADER_FACTORIES),
  };
}
