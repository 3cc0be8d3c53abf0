// The list of uploads: one card per multimedia job, created once and updated in place as the feed
// reports changes. Every value from the server goes in as text (file names and messages are
// whatever users typed), never as markup, with its bidirectional controls made visible (text.js).
import { shown } from "./text.js";

const STATE_WORDS = { QUEUED: "Queued", RUNNING: "Running", COMPLETE: "Complete", FAILED: "Failed" };
const FINISHED = new Set(["COMPLETE", "FAILED"]);

/** `el("p", { className: "x" }, "text", child)`: an element with properties and children (text as shown) */
function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(
    ...children.filter((child) => child !== null && child !== undefined).map((child) => (typeof child === "string" ? shown(child) : child)),
  );
  return node;
}

function formatBytes(bytes) {
  if (bytes === null || bytes === undefined) return "";
  const units = ["bytes", "KB", "MB", "GB"];
  let value = Number(bytes);
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
function formatTime(iso) {
  return iso ? timeFormat.format(new Date(iso)) : "";
}

function progressText(job) {
  const { current, total, percent } = job.progress;
  return total ? `${percent} % · ${current} of ${total} ${total === 1 ? "file" : "files"}` : `${percent} %`;
}

function resultList(job) {
  const r = job.result;
  const figures = [
    ["Matched", r.matchedCount],
    ["Unmatched", r.unmatchedCount],
    ["Files", r.totalFiles],
    ["Images", r.imageCount],
    ["Audio", r.audioCount],
    ["Video", r.videoCount],
  ];
  return el(
    "dl",
    { className: "job-result" },
    ...figures.map(([term, value]) =>
      el("div", { className: `figure figure-${term.toLowerCase()}` }, el("dt", {}, term), el("dd", {}, String(value))),
    ),
  );
}

/** A titled list of files, or nothing when there are none. */
function fileGroup(title, items) {
  return items.length ? [el("h4", {}, title), el("ul", {}, ...items)] : [];
}

function fileDetails(job) {
  const { matchedFiles = [], unmatchedFiles = [], skippedFiles = [] } = job.result;
  const withReason = (f) => el("li", {}, el("code", {}, f.path), ` — ${f.reason}`);
  const groups = [
    ...fileGroup(
      "Matched",
      matchedFiles.map((f) => el("li", {}, el("code", {}, f.path), ` (${String(f.mediaClass).toLowerCase()}, ${formatBytes(f.size)})`)),
    ),
    ...fileGroup("Unmatched", unmatchedFiles.map(withReason)),
    ...fileGroup("Skipped", skippedFiles.map(withReason)),
  ];
  return groups.length ? el("details", { className: "job-files" }, el("summary", {}, "Files"), ...groups) : null;
}

/** The card's content for the job as it is now (rebuilt whole: a card is a few dozen nodes). */
function cardContent(job) {
  const name = job.fileName || job.processingId;
  const headingId = `job-${job.processingId}-name`;
  const percent = job.progress.percent;
  const progress = el("progress", { max: 100, value: percent });
  progress.setAttribute("aria-labelledby", headingId);
  progress.setAttribute("aria-valuemin", "0");
  progress.setAttribute("aria-valuemax", "100");
  progress.setAttribute("aria-valuenow", String(percent));
  progress.setAttribute("aria-valuetext", progressText(job));
  const meta = [
    job.app ? `App ${job.app.name}` : null,
    job.uploadedBy ? `by ${job.uploadedBy.username}` : null,
    formatBytes(job.sizeBytes),
    formatTime(job.createdAt),
    job.attempts > 1 ? `attempt ${job.attempts}` : null,
  ].filter(Boolean);
  return [
    el(
      "div",
      { className: "job-head" },
      el("h3", { id: headingId, className: "job-name" }, name),
      el("span", { className: `state state-${job.state.toLowerCase()}` }, STATE_WORDS[job.state] ?? job.state),
    ),
    el("p", { className: "job-meta" }, meta.join(" · ")),
    el("div", { className: "job-progress" }, progress, el("span", { className: "job-percent" }, progressText(job))),
    job.errors.length ? el("ul", { className: "job-errors" }, ...job.errors.map((message) => el("li", {}, message))) : null,
    job.result ? resultList(job) : null,
    job.result ? fileDetails(job) : null,
  ].filter(Boolean);
}

/**
 * The uploads of one domain, newest first, keyed by processing id. `announce` hears a sentence for
 * each state change (for the page's polite live region).
 */
export class JobList {
  /** @param {HTMLOListElement} list  @param {(sentence: string) => void} announce */
  constructor(list, announce) {
    this.list = list;
    this.announce = announce;
    /** @type {Map<string, {job: object, card: HTMLLIElement}>} */
    this.cards = new Map();
  }

  clear() {
    this.cards.clear();
    this.list.replaceChildren();
  }

  get size() {
    return this.cards.size;
  }

  /** Adds older jobs (a next page) at the end. */
  append(jobs) {
    for (const job of jobs) if (!this.cards.has(job.processingId)) this.list.append(this.render(job));
  }

  /** A job as the feed or a fresh read reports it: updated in place, or added in date order. */
  upsert(job) {
    const entry = this.cards.get(job.processingId);
    if (!entry) return void this.insertByDate(this.render(job), job);
    if (this.isStale(entry.job, job)) return;
    if (entry.job.state !== job.state) this.announce(shown(`${job.fileName || job.processingId}: ${STATE_WORDS[job.state] ?? job.state}.`));
    entry.job = job;
    this.paint(entry.card, job);
  }

  /** a late event (e.g. a fresh read answered after the feed's newer one) must not move a card back */
  isStale(shown, incoming) {
    if (FINISHED.has(shown.state) && !FINISHED.has(incoming.state)) return true;
    return shown.state === incoming.state && incoming.progress.current < shown.progress.current;
  }

  render(job) {
    const card = el("li", { className: "job" });
    this.cards.set(job.processingId, { job, card });
    this.paint(card, job);
    return card;
  }

  paint(card, job) {
    const filesOpen = card.querySelector("details")?.open;
    card.dataset.processingId = job.processingId;
    card.dataset.state = job.state;
    card.replaceChildren(...cardContent(job));
    // a repaint keeps the file list open if the user opened it
    const details = card.querySelector("details");
    if (details && filesOpen) details.open = true;
  }

  insertByDate(card, job) {
    const isOlder = (other) => other !== card && this.cards.get(other.dataset.processingId).job.createdAt <= job.createdAt;
    this.list.insertBefore(card, [...this.list.children].find(isOlder) ?? null);
  }
}
