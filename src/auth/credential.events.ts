/**
 * The event published whenever what a user may do changes: an API key revoked, the user
 * deactivated or changed (password, superuser flag), a membership or its permissions changed,
 * OAuth tokens revoked. Every process re-checks that user's open WebSockets when it hears it.
 */

export const CREDENTIALS_CHANGED = "credentialsChanged" as const;

interface CredentialsChangedEvent {
  userId: string;
}

declare module "../events/bus.ts" {
  interface TopicRegistry {
    credentialsChanged: [CredentialsChangedEvent];
  }
}
