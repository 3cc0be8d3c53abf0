import { createPubSub } from "@graphql-yoga/subscription";

/**
 * The one PubSub of the process, with typed topics. Embedded mode delivers in process; PostgreSQL
 * mode bridges it through LISTEN/NOTIFY so that every process sees every event.
 */
export type Topics = {
  // Filled in by the features that publish (case changes, multimedia progress).
  [topic: string]: [unknown];
};

export type PubSub = ReturnType<typeof createPubSub<Topics>>;

export function createLocalPubSub(): PubSub {
  return createPubSub<Topics>();
}
