/** The event a case write publishes (CONTRACT §5: a subscription for case changes in a domain). */

export const CASE_CHANGED = "caseChanged" as const;

export interface CaseChangedEvent {
  domain: string;
  caseId: string;
  caseType: string;
  formId: string;
}

declare module "../events/bus.ts" {
  interface TopicRegistry {
    caseChanged: [CaseChangedEvent];
  }
}
