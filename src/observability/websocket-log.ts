import { log } from "../log.ts";
import { collectErrorCodes, loggedName, operationLog, type OperationLog } from "./graphql.ts";

/**
 * The log lines of one GraphQL WebSocket (CONTRACT §7.2: one JSON line per event, never a
 * credential, a variable's value or a message's body): connected or refused, each operation
 * started (or refused) and completed with the `graphql` field HTTP's lines carry, its credentials
 * withdrawn (4403), and closed with its code. Every line names the connection by `requestId`: the
 * upgrade request's `X-Request-Id` when well-formed (the 101 answer sends it back), else a new one;
 * and by `username` once it is admitted.
 */

/** A graphql-ws operation id, written only when it is short and plain (it is the client's choice). */
const OPERATION_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** What a close code says, for searching: the protocol's codes and this server's own. */
const CLOSE_REASONS: Record<number, string> = {
  1000: "normal",
  1001: "going away",
  1002: "protocol error",
  1005: "no status",
  1006: "abnormal",
  1008: "policy violation",
  1009: "message too big",
  1011: "server error",
  1013: "try again later",
  4400: "bad request",
  4401: "unauthorized",
  4403: "forbidden",
  4406: "subprotocol not acceptable",
  4408: "connection initialisation timeout",
  4409: "subscriber already exists",
  4429: "too many initialisation requests",
  4430: "too many failed logins",
  4500: "internal server error",
};

/** The reason category of a close code (never the close frame's own text, which a client writes). */
function closeReason(code: number): string {
  return CLOSE_REASONS[code] ?? (code >= 4000 ? "application" : "other");
}

interface LiveOperation {
  started: bigint;
  graphql: OperationLog;
  codes: Set<string>;
}

/** What an operation is, as the subscribe step found it. */
export interface OperationSeen {
  type?: string;
  name?: string | null;
}

const msSince = (started: bigint) => Math.round(Number(process.hrtime.bigint() - started) / 1e6);

export class ConnectionLog {
  private readonly opened = process.hrtime.bigint();
  private username: string | undefined;
  private readonly live = new Map<string, LiveOperation>();
  private ended = false;

  constructor(
    readonly requestId: string,
    /** PERSISTED_OPERATIONS=only: the manifest's names, the only ones logged over WebSocket */
    private readonly trustedNames?: ReadonlySet<string>,
  ) {}

  /** The fields every line of the connection starts with. */
  private get who(): Record<string, unknown> {
    return { requestId: this.requestId, ...(this.username ? { username: this.username } : {}) };
  }

  private graphql(operation: OperationSeen, codes: ReadonlySet<string>): OperationLog {
    const name = operation.name ?? undefined;
    return operationLog(operation.type, loggedName(name, Boolean(name && this.trustedNames?.has(name))), codes);
  }

  private idFields(id: string): Record<string, unknown> {
    return OPERATION_ID.test(id) ? { operationId: id } : {};
  }

  /** connection_init admitted: the user it runs as. */
  connected(username: string): void {
    this.username = username;
    log.info("websocket connected", this.who);
  }

  /** connection_init refused: the admission's error code, and the code the socket closes with. */
  refused(errorCode: string, closeCode: number): void {
    log.info("websocket connection refused", { ...this.who, errorCode, closeCode });
  }

  /** A subscribe message admitted: its operation runs. */
  operationStarted(id: string, operation: OperationSeen): void {
    const graphql = this.graphql(operation, new Set());
    this.live.set(id, { started: process.hrtime.bigint(), graphql, codes: new Set() });
    log.info("websocket operation started", { ...this.who, ...this.idFields(id), graphql });
  }

  /** A subscribe message refused before its operation ran: the codes of its errors. */
  operationRefused(id: string, operation: OperationSeen, errors: readonly { extensions?: { code?: unknown } }[]): void {
    const codes = new Set<string>();
    collectErrorCodes(codes, errors);
    log.info("websocket operation refused", { ...this.who, ...this.idFields(id), graphql: this.graphql(operation, codes) });
  }

  /** A result (or error) sent for an operation: its error codes are kept for the completed line. */
  answered(id: string, errors: readonly { extensions?: { code?: unknown } | null }[] | null | undefined): void {
    if (errors?.length) {
      const operation = this.live.get(id);
      if (operation) collectErrorCodes(operation.codes, errors);
    }
  }

  /** An operation ended (its result sent, its subscription finished or completed by the client). */
  operationCompleted(id: string): void {
    // none after the close: the close's line counts what it ended
    const operation = this.live.get(id);
    if (!operation) return;
    this.live.delete(id);
    const graphql = operationLog(operation.graphql.operationType, operation.graphql.operationName, operation.codes);
    log.info("websocket operation completed", { ...this.who, ...this.idFields(id), graphql, durationMs: msSince(operation.started) });
  }

  /**
   * The socket is being closed 4403 because its credentials no longer stand (revoked, changed
   * permissions, an expired token): a warning when they were taken away, routine for an expiry.
   */
  credentialsWithdrawn(reason: string, closeCode: number, expired: boolean): void {
    const fields = { ...this.who, reason, closeCode };
    if (expired) log.info("websocket closed: its credentials no longer stand", fields);
    else log.warn("websocket closed: its credentials no longer stand", fields);
  }

  /** The socket closed (by either side): its code, what the code means, and the operations it ended. */
  closed(code: number): void {
    if (this.ended) return;
    this.ended = true;
    const operationsEnded = this.live.size;
    this.live.clear();
    log.info("websocket closed", {
      ...this.who,
      code,
      reason: closeReason(code),
      ...(operationsEnded ? { operationsEnded } : {}),
      durationMs: msSince(this.opened),
    });
  }
}
