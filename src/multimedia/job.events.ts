/** The event a multimedia job publishes on every progress change and when it settles (CONTRACT §5). */

export const MULTIMEDIA_PROGRESS = "multimediaProgress" as const;

export interface MultimediaStatus {
  success: true;
  complete: boolean;
  in_queue: boolean;
  progress: { percent: number; current: number; total: number };
  errors: unknown[];
  processing_id: string;
  [resultField: string]: unknown;
}
