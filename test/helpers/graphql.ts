import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { print, type FormattedExecutionResult } from "graphql";
import type { TestApp } from "./app.ts";

/** Runs a typed document over HTTP POST /graphql, as a client would. */
export async function gql<TResult, TVariables>(
  app: TestApp,
  authorization: string | undefined,
  document: TypedDocumentNode<TResult, TVariables>,
  variables?: TVariables,
): Promise<{ status: number; body: FormattedExecutionResult<TResult> }> {
  const req = app.http().post("/graphql").set("Content-Type", "application/json");
  if (authorization) req.set("Authorization", authorization);
  const res = await req.send({ query: print(document), variables });
  return { status: res.status, body: res.body };
}

/** The `extensions.code` of each error, in order. */
export const errorCodes = (body: FormattedExecutionResult<unknown>) => (body.errors ?? []).map((e) => e.extensions?.code);
