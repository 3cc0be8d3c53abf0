// The upload dashboard (CONTRACT §7.4): sign in, pick a domain, watch its uploads live, upload a ZIP.
import { openFeed, request, subscribe, upload } from "./api.js";
import { APPS, FEED, JOB, JOBS, ME, UPLOAD } from "./documents.js";
import { JobList } from "./jobs.js";
import { finishSignIn, oidcSettings, startSignIn } from "./oidc.js";
import { setText, shown } from "./text.js";

const PAGE_SIZE = 20;
/**
 * sessionStorage: an API key lives in this tab only and goes when the tab closes. A password is
 * never stored (issue #24 G8): it is the user's long-lived secret, likely used elsewhere, and storage
 * outlives the page (a reload, a restored session); it stays in this page's memory while the page
 * is open, and a reload asks for it again.
 */
const STORAGE_KEY = "dashboard.authorization";
/** when the stored credential stops working (ms since the epoch): an identity provider's access token expires */
const EXPIRY_KEY = "dashboard.expiresAt";
/**
 * The server closes the feed (4403) at the token's expiry by its own clock, a little before the
 * expiry the page computed when the token arrived: a refusal this close to it is the expiry.
 */
const EXPIRY_MARGIN_MS = 5000;

const $ = (id) => document.getElementById(id);

const session = {
  authorization: null,
  /** when the access token expires (ms since the epoch), and the timer that signs the page out then */
  expiresAt: null,
  expiryTimer: null,
  /** the feed's graphql-ws client, one per sign-in */
  feed: null,
  unsubscribe: null,
  domain: null,
  endCursor: null,
  totalCount: 0,
};

const announcer = $("announcer");
const jobs = new JobList($("jobs"), (sentence) => {
  setText(announcer, sentence);
});

function showError(error) {
  setText($("error"), error instanceof Error ? error.message : String(error));
  $("error").hidden = false;
}

function clearError() {
  $("error").hidden = true;
  setText($("error"), "");
}

/** Runs an action of the page, showing its failure in words instead of losing it. */
function guarded(action) {
  return async (event) => {
    event?.preventDefault();
    try {
      await action(event);
    } catch (error) {
      showError(error);
    }
  };
}

// --- signing in -----------------------------------------------------------------------------------

function base64(text) {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

/** The form's credential, and whether it may be kept in the tab's storage (an API key, not a password). */
function credentialFrom(form) {
  const data = new FormData(form);
  const username = String(data.get("username")).trim();
  const secret = String(data.get("secret"));
  return data.get("method") === "password"
    ? { authorization: `Basic ${base64(`${username}:${secret}`)}`, storable: false }
    : { authorization: `ApiKey ${username}:${secret}`, storable: true };
}

/** `expiresAt`: when the credential expires (an access token), in ms since the epoch; null for none. */
async function signIn({ authorization, storable, expiresAt = null }) {
  const { me } = await request(authorization, ME);
  session.authorization = authorization;
  if (storable) sessionStorage.setItem(STORAGE_KEY, authorization);
  else sessionStorage.removeItem(STORAGE_KEY);
  session.expiresAt = expiresAt;
  if (expiresAt) {
    sessionStorage.setItem(EXPIRY_KEY, String(expiresAt));
    // setTimeout's longest wait is about 24.8 days; a token lives far less
    session.expiryTimer = setTimeout(expired, Math.min(expiresAt - Date.now(), 2 ** 31 - 1));
  } else sessionStorage.removeItem(EXPIRY_KEY);
  setText($("session-user"), me.username);
  $("session").hidden = false;
  $("sign-in").hidden = true;
  $("sign-in-form").reset();
  $("workspace").hidden = false;
  session.feed = openFeed(authorization, onFeedState);
  showDomainPicker(me);
  return me;
}

/** Opens the first of the user's domains (a superuser with none types one). */
async function openFirstDomain(me) {
  const first = me.memberships[0]?.domain;
  if (first) await openDomain(first);
  else if (!me.isSuperuser) showError("Your account is a member of no domain: ask an administrator to add you to one.");
}

function signOut() {
  closeDomain();
  session.feed?.dispose();
  clearTimeout(session.expiryTimer);
  Object.assign(session, { authorization: null, feed: null, domain: null, expiresAt: null, expiryTimer: null });
  sessionStorage.removeItem(STORAGE_KEY);
  sessionStorage.removeItem(EXPIRY_KEY);
  $("session").hidden = true;
  $("workspace").hidden = true;
  $("sign-in").hidden = false;
  clearError();
  setFeedStatus("idle", "Live updates: off");
  $("username").focus();
}

/** An access token's end: the page signs out and says why, rather than failing request by request. */
function expired() {
  signOut();
  showError("Your sign-in has expired: sign in again.");
}

/** The feed refused (a closed socket, a subscription error): at the token's expiry that is the expiry. */
function feedRefused(error) {
  if (!session.authorization) return; // signed out meanwhile
  if (session.expiresAt && Date.now() >= session.expiresAt - EXPIRY_MARGIN_MS) return expired();
  showError(error);
}

// --- the domain -----------------------------------------------------------------------------------

/** A member picks among their domains; a superuser, who may open any, types one (with suggestions). */
function showDomainPicker(me) {
  const domains = me.memberships.map((m) => m.domain);
  const options = domains.map((domain) => Object.assign(document.createElement("option"), { value: domain, textContent: shown(domain) }));
  let picker;
  if (me.isSuperuser) {
    picker = Object.assign(document.createElement("input"), { id: "domain", required: true, autocomplete: "off", value: domains[0] ?? "" });
    picker.setAttribute("list", "domain-options");
    $("domain-options").replaceChildren(...options);
  } else {
    picker = Object.assign(document.createElement("select"), { id: "domain", required: true });
    picker.append(...options);
    picker.addEventListener(
      "change",
      guarded(() => openDomain(picker.value)),
    );
  }
  $("domain-slot").replaceChildren(picker);
}

function closeDomain() {
  session.unsubscribe?.();
  session.unsubscribe = null;
  jobs.clear();
  $("upload").hidden = true;
  $("older").hidden = true;
  $("jobs-empty").hidden = true;
  setText($("jobs-count"), "");
}

async function openDomain(domain) {
  clearError();
  closeDomain();
  session.domain = domain;
  // the feed first, so that no change between the first read and the subscription is missed
  session.unsubscribe = subscribe(session.feed, FEED, { domain }, ({ multimediaJobs: job }) => onJobChanged(job), feedRefused);
  await Promise.all([loadJobs(), loadApps(domain)]);
}

async function loadJobs(after = null) {
  const domain = session.domain;
  const { multimediaJobs: page } = await request(session.authorization, JOBS, { domain, first: PAGE_SIZE, after });
  if (domain !== session.domain) return; // the user moved on meanwhile
  if (after) jobs.append(page.nodes);
  else for (const job of page.nodes) jobs.upsert(job);
  session.endCursor = page.pageInfo.endCursor;
  session.totalCount = page.totalCount;
  $("older").hidden = !page.pageInfo.hasNextPage;
  showCount();
}

function showCount() {
  const total = Math.max(session.totalCount, jobs.size);
  setText($("jobs-count"), `(${total})`);
  setText($("jobs-empty"), `No uploads in ${session.domain} yet.`);
  $("jobs-empty").hidden = total > 0;
}

function onJobChanged(job) {
  const isNew = !jobs.cards.has(job.processingId);
  jobs.upsert(job);
  if (isNew) {
    session.totalCount += 1;
    showCount();
  }
}

// --- the live feed's state --------------------------------------------------------------------------

function setFeedStatus(state, text) {
  $("feed-status").dataset.state = state;
  setText($("feed-status"), text);
}

function onFeedState(state, detail) {
  if (!session.authorization) return; // a signed-out session's client closing
  if (state === "live") {
    setFeedStatus("live", "Live updates: on");
    // after a reconnection, read again what the feed may have missed while it was down
    if (detail && session.domain) loadJobs().catch(showError);
  } else if (state === "refused") {
    setFeedStatus("off", "Live updates: refused");
    feedRefused(detail);
  } else {
    setFeedStatus("connecting", "Live updates: connecting…");
  }
}

// --- uploading ----------------------------------------------------------------------------------------

async function loadApps(domain) {
  const status = $("upload-status");
  setText(status, "");
  let apps;
  try {
    ({ apps } = await request(session.authorization, APPS, { domain }));
  } catch (error) {
    // listing apps needs its own permission: without it the uploads stay visible, the form says why
    apps = [];
    setText(status, `Uploading is not available: ${error.message}`);
  }
  if (domain !== session.domain) return;
  const options = apps.map((app) => Object.assign(document.createElement("option"), { value: app.appId, textContent: shown(app.name) }));
  $("app").replaceChildren(...options);
  if (!apps.length && !status.textContent) setText(status, `No applications in ${domain} yet: import one first.`);
  $("upload-button").disabled = apps.length === 0;
  $("upload").hidden = false;
}

function showChosenFile() {
  const file = $("file").files[0];
  setText($("chosen-file"), file ? `Chosen: ${file.name}` : "");
}

async function sendUpload() {
  const file = $("file").files[0];
  const status = $("upload-status");
  if (!file) throw new Error("Choose a ZIP file to upload first.");
  const domain = session.domain;
  const button = $("upload-button");
  button.disabled = true;
  setText(status, `Sending ${file.name}…`);
  try {
    const onProgress = (sent, total) => {
      setText(status, `Sending ${file.name}: ${Math.floor((100 * sent) / total)} %`);
    };
    const { uploadMultimedia: processingId } = await upload(session.authorization, UPLOAD, { domain, appId: $("app").value }, file, onProgress);
    setText(status, `${file.name} is queued; its progress shows below.`);
    $("upload-form").reset();
    showChosenFile();
    // the feed announces the new job too; reading it here shows it even while the feed reconnects
    const { multimediaJob } = await request(session.authorization, JOB, { domain, processingId });
    if (domain === session.domain) onJobChanged(multimediaJob);
  } catch (error) {
    setText(status, `The upload failed. ${error.message}`);
    throw error;
  } finally {
    button.disabled = false;
  }
}

function wireDropZone(zone, input) {
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("dragging");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("dragging");
    if (!event.dataTransfer?.files.length) return;
    input.files = event.dataTransfer.files;
    showChosenFile();
  });
}

// --- wiring ---------------------------------------------------------------------------------------------

function showSecretLabel() {
  const byPassword = document.querySelector('input[name="method"]:checked').value === "password";
  setText($("secret-label"), byPassword ? "Password" : "API key");
  $("secret").autocomplete = byPassword ? "current-password" : "off";
}

$("sign-in-form").addEventListener(
  "submit",
  guarded(async (event) => {
    clearError();
    await openFirstDomain(await signIn(credentialFrom(event.target)));
  }),
);
for (const radio of document.querySelectorAll('input[name="method"]')) radio.addEventListener("change", showSecretLabel);
$("sign-out").addEventListener("click", signOut);
$("domain-form").addEventListener(
  "submit",
  guarded(() => openDomain($("domain").value.trim())),
);
$("older").addEventListener(
  "click",
  guarded(() => loadJobs(session.endCursor)),
);
$("upload-form").addEventListener(
  "submit",
  guarded(() => sendUpload()),
);
$("file").addEventListener("change", showChosenFile);
wireDropZone($("drop-zone"), $("file"));

/** With an identity provider: its sign-in button, and the way back from it (a code in the address). */
async function offerProviderSignIn() {
  const settings = await oidcSettings().catch((error) => {
    showError(error);
    return null;
  });
  if (!settings) return null;
  $("oidc-sign-in").hidden = false;
  $("oidc-button").addEventListener(
    "click",
    guarded(() => startSignIn(settings)),
  );
  return finishSignIn(settings);
}

/** A reload of the tab keeps an API key's or access token's session (sessionStorage); a refused or expired one is forgotten. */
async function resumeSession() {
  const saved = sessionStorage.getItem(STORAGE_KEY);
  if (!saved) return;
  const expiresAt = Number(sessionStorage.getItem(EXPIRY_KEY)) || null;
  let me;
  try {
    if (expiresAt && expiresAt <= Date.now()) throw new Error("Your sign-in has expired: sign in again.");
    me = await signIn({ authorization: saved, storable: true, expiresAt });
  } catch (error) {
    sessionStorage.removeItem(STORAGE_KEY);
    sessionStorage.removeItem(EXPIRY_KEY);
    throw error;
  }
  await openFirstDomain(me);
}

async function start() {
  // a failed return from the provider (refused, or another tab's) says so, and a kept session still resumes
  const token = await offerProviderSignIn().catch((error) => {
    showError(error);
    return null;
  });
  if (!token) return resumeSession();
  clearError();
  await openFirstDomain(await signIn({ authorization: `Bearer ${token.accessToken}`, storable: true, expiresAt: token.expiresAt }));
}

start().catch(showError);
