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
 * as it is live) or a query touching one feature builds only what it reads. The getters are the
 * prototype's, made once for the process: a context holds only the loaders it made (a wall of
 * dashboards holds one context per subscription).
 */
function lazyLoadersClass(make: LoaderFactories): new (principal: Principal, services: ResolverServices) => Loaders {
  class LazyLoaders {
    readonly #made: Partial<Loaders> = {};
    readonly #principal: Principal;
    readonly #services: ResolverServices;

    constructor(principal: Principal, services: ResolverServices) {
      this.#principal = principal;
      this.#services = services;
    }

    /** The feature's loaders, made now if they were not yet. */
    static made<K extends keyof Loaders>(loaders: LazyLoaders, key: K): Loaders[K] {
      const made = loaders.#made;
      made[key] ??= make[key](loaders.#principal, loaders.#services) as never;
      return made[key] as Loaders[K];
    }
  }
  for (const key of Object.keys(make) as (keyof Loaders)[]) {
    Object.defineProperty(LazyLoaders.prototype, key, {
      enumerable: true,
      get(this: LazyLoaders) {
        return LazyLoaders.made(this, key);
      },
    });
  }
  return LazyLoaders as unknown as new (
    principal: Principal,
    services: ResolverServices,
  ) => Loaders;
}

/** made at the first context, once the features' modules are all loaded */
let LazyLoaders: ReturnType<typeof lazyLoadersClass> | undefined;

function lazyLoaders(): ReturnType<typeof lazyLoadersClass> {
  LazyLoaders ??= lazyLoadersClass(LOADER_FACTORIES);
  return LazyLoaders;
}

export function createContext(principal: Principal, services: ResolverServices, limits: BudgetLimits): GraphQLContext {
  return {
    principal,
    services,
    budget: new ExecutionBudget(limits),
    loaders: new (lazyLoaders())(principal, services),
  };
}
