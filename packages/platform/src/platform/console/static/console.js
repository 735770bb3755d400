// The platform console: a client of the platform's API and nothing else. It logs in with
// POST /users/<email>/tokens, then calls the same routes as any client, with the bearer token.
// Data from the API (and so from providers) only ever reaches the page as text nodes.
//
// Every place has an address (`#/instances/<service>/<instance>`, `#/calls/<id>`, ...), so reload,
// back and forward and a shared link all land there. Reads that make the platform call a provider
// (status, info, health, plans) happen when a person opens a page or acts, never on a timer; the
// timer reads only the platform's own records, and the status of instances still pending.

import { actionsPanel } from "./actions.js";
import { callBody, storyItems, timelineItems } from "./calls.js";
import { h } from "./dom.js";
import { INSTANCE_NAME } from "./rules.js";

const POLL_MS = 3000;
/** Least time between two reads of a pending instance's status on the timer. */
const PENDING_MS = 5000;
const PAGE = 25;
const CALLS_PAGE = 50;
/** Provider-backed reads seen this recently are shown again as they are when a page is opened. */
const FRESH_MS = 10_000;

const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem("token");
let route = { page: "services", parts: [], query: new URLSearchParams() };
/** Bumped on each navigation: a page's load that finds it changed leaves the page to the newer one. */
let generation = 0;
let polling = false;
/** A refresh was asked for while one ran. */
let pollAgain = false;

function say(text, failed = false) {
  const message = $("message");
  message.textContent = text;
  message.classList.toggle("failed", failed);
}

class ApiError extends Error {
  constructor(status, text) {
    super(text || `HTTP ${status}`);
    this.status = status;
  }
}

/** One API call; JSON bodies unless `text` is given. Answers `{status, text, headers, json()}`. */
async function api(method, path, { json, text } = {}) {
  const headers = {};
  if (token) headers.Authorization = `bearer ${token}`;
  let body;
  if (json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(json);
  } else if (text !== undefined) {
    headers["Content-Type"] = "text/plain";
    body = text;
  }
  const response = await fetch(path, { method, headers, body });
  const answer = await response.text();
  if (response.status === 401 && token) {
    logOut("Your session ended: log in again.");
    throw new ApiError(401, "Not logged in.");
  }
  return { status: response.status, text: answer, headers: response.headers, json: () => JSON.parse(answer) };
}

/** The answer's JSON when the status is 2xx, else an error with the platform's message. */
async function ok(method, path, options) {
  const answer = await api(method, path, options);
  if (answer.status >= 300) throw new ApiError(answer.status, answer.text.trim());
  return answer;
}

/** The platform's message, and what to do about it. */
function advice(error) {
  const message = error.message.replace(/\s+$/, "");
  const sentence = /[.!?]$/.test(message) ? message : `${message}.`;
  if (error.status === 403) return `${sentence} Ask an admin, or a member of the team that owns it, for access.`;
  if (error.status === 404) return `${sentence} It may have been removed: open the list again.`;
  if (error.status >= 500) return `${sentence} The provider's answer is under Provider calls.`;
  if (error.status === undefined) return `${sentence} Check that the platform is still running, then try again.`;
  return sentence;
}

/** An error shown in its slot, next to the form or buttons that caused it. */
function showError(slot, text, link) {
  slot.replaceChildren(text, ...(link ? [" ", h("a", { href: link.href }, link.text)] : []));
  slot.hidden = false;
}

function hideError(slot) {
  slot.hidden = true;
  slot.replaceChildren();
}

/** Marks a field wrong, with the reason beside it; the first wrong field gets the focus. */
function fieldError(field, text) {
  const slot = $(`${field.id}-error`);
  field.setAttribute("aria-invalid", "true");
  slot.textContent = text;
  slot.hidden = false;
}

function clearFieldErrors(form) {
  for (const field of form.querySelectorAll("[aria-invalid]")) field.removeAttribute("aria-invalid");
  for (const slot of form.querySelectorAll(".field-error, .form-error")) hideError(slot);
}

/**
 * Runs what a person asked for from a button or form: its progress in the status line, its
 * failure in `slot` next to what caused it. Then the page shows the change, reading only what changed.
 */
async function act(label, work, slot, { failedLink, forget } = {}) {
  hideError(slot);
  // What the provider said of the instance acted on is read again.
  if (forget) known.delete(forget);
  const button = slot.closest("form")?.querySelector("button[type=submit]");
  if (button) button.setAttribute("aria-busy", "true");
  say(`${label}…`);
  try {
    await work();
    say(`${label}: done.`);
  } catch (error) {
    say("");
    showError(slot, `${label} failed: ${advice(error)}`, error.status >= 500 ? failedLink : undefined);
  } finally {
    button?.removeAttribute("aria-busy");
  }
  await poll();
}

// Addresses ----------------------------------------------------------------------------------

/** `#/instances/redis/cache` as a page and its parts; an address naming no page is the services page. */
function parseRoute(hash) {
  const raw = hash.replace(/^#\/?/, "");
  const at = raw.indexOf("?");
  const path = at === -1 ? raw : raw.slice(0, at);
  const parts = path.split("/").filter((part) => part !== "").map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  // "." and ".." would climb out of the API path a part is put in (no name the platform takes is either).
  }).filter((part) => part !== "." && part !== "..");
  const page = parts.length > 0 && Object.hasOwn(pages, parts[0]) ? parts[0] : "services";
  return { page, parts: page === parts[0] ? parts.slice(1) : [], query: new URLSearchParams(at === -1 ? "" : raw.slice(at + 1)) };
}

const link = (...parts) => `#/${parts.map(encodeURIComponent).join("/")}`;
const go = (hash) => {
  if (location.hash === hash) show(true);
  else location.hash = hash;
};

// Pages -------------------------------------------------------------------------------------

const pages = {
  services: { load: loadServices },
  instances: { load: loadInstances, poll: pollInstances, page: 1 },
  apps: { load: pollApps, poll: pollApps, page: 1 },
  calls: { load: loadCalls, poll: pollCalls, cursors: [] },
  log: { load: pollLog, poll: pollLog },
  users: { load: loadUsers },
};

const TITLES = { services: "Services", instances: "Instances", apps: "Apps", calls: "Provider calls", log: "App log", users: "Users" };

/** Shows the page the address names; `focus`: after a person's navigation, the focus goes to its title. */
async function show(focus) {
  if (!token) return;
  route = parseRoute(location.hash);
  const mine = ++generation;
  for (const section of document.querySelectorAll(".page")) section.hidden = section.id !== `page-${route.page}`;
  for (const item of document.querySelectorAll("#nav a")) {
    if (item.dataset.page === route.page) item.setAttribute("aria-current", "page");
    else item.removeAttribute("aria-current");
  }
  document.title = `${[...route.parts].reverse().concat(TITLES[route.page]).join(" · ")} — provider-kit platform`;
  if (focus) say("");
  const focusedBefore = document.activeElement;
  try {
    await pages[route.page].load(route, () => mine !== generation);
  } catch (error) {
    if (error.status !== 401 && mine === generation) say(`Could not show this page: ${advice(error)}`, true);
  }
  // Someone who moved into the page while it loaded (typing in its form) keeps their place.
  const focusMoved = document.activeElement !== focusedBefore && document.activeElement !== document.body;
  if (focus && mine === generation && !focusMoved) {
    const title = [...document.querySelectorAll(`#page-${route.page} h2`)].find((heading) => heading.offsetParent !== null);
    title?.focus();
  }
}

/** What the timer does: the page's own records again, never a provider's unless an instance is pending. */
async function poll() {
  const page = pages[route.page];
  if (!token || document.hidden || !page.poll) return;
  // One refresh at a time; one asked for meanwhile (an action just done) runs after it, since
  // the one under way may have read the records before the action changed them.
  if (polling) return void (pollAgain = true);
  polling = true;
  const mine = generation;
  try {
    await page.poll(route, () => mine !== generation);
  } catch (error) {
    if (error.status !== 401) say(`Could not refresh: ${advice(error)}`, true);
  } finally {
    polling = false;
  }
  if (pollAgain) {
    pollAgain = false;
    await poll();
  }
}

function pager(element, page, pageCount, goTo) {
  element.replaceChildren(
    h("button", { type: "button", disabled: page <= 1, onclick: () => goTo(page - 1) }, "Previous"),
    h("span", {}, ` Page ${page} of ${Math.max(pageCount, 1)} `),
    h("button", { type: "button", disabled: page >= pageCount, onclick: () => goTo(page + 1) }, "Next"),
  );
}

/** A table row, each cell labelled with its column for the narrow layout. */
function row(table, attributes, cells) {
  const headings = [...$(table).closest("table").querySelectorAll("thead th")].map((th) => th.textContent);
  return h("tr", attributes, cells.map((cell, index) => {
    cell.setAttribute("data-label", headings[index] ?? "");
    return cell;
  }));
}

/** A table's single row saying there is nothing, and what to do. */
function emptyRow(table, ...content) {
  const columns = $(table).closest("table").querySelectorAll("thead th").length;
  return h("tr", { class: "empty" }, h("td", { colspan: String(columns) }, ...content));
}

/** A term and its value in a facts list. */
const fact = (term, ...value) => [h("dt", {}, term), h("dd", {}, ...value)];

function loading(table) {
  $(table).replaceChildren(emptyRow(table, h("span", { class: "spinner", "aria-hidden": "true" }), " Loading…"));
  $(table).closest("table").setAttribute("aria-busy", "true");
}

function loaded(table) {
  $(table).closest("table").removeAttribute("aria-busy");
}

// Services ----------------------------------------------------------------------------------

/** The last health read: `{at, lines}`; the provider lines cost each provider a call. */
let health;

/** `/healthcheck/?check=all` lines by component name; undefined when the platform does not serve it. */
async function healthLines(force) {
  if (!force && health && Date.now() - health.at < FRESH_MS) return health.lines;
  const answer = await api("GET", "/healthcheck/?check=all");
  const lines = answer.text.split("\n").map((line) => /^(.+?): (WORKING.*|fail - .*)$/.exec(line.trim())).filter(Boolean);
  health = { at: Date.now(), lines: lines.length === 0 ? undefined : new Map(lines.map((match) => [match[1], match[2]])) };
  return health.lines;
}

function healthOf(lines, service) {
  if (!lines) return undefined;
  const name = [...lines.keys()].find((key) => key === service || key.split(/[\s:/]+/).includes(service));
  return name === undefined ? undefined : lines.get(name);
}

function healthCell(lines, service) {
  if (!lines) return h("td", {}, "not available");
  const state = healthOf(lines, service);
  if (state === undefined) return h("td", {}, "not reported");
  return h("td", {}, h("span", { class: `badge ${state.startsWith("WORKING") ? "good" : "bad"}` }, state));
}

const providers = new Map();

/** How the platform reaches the service's provider, whether it is multi-cluster, whether you own it (platform records, no provider call). */
async function providerOf(service) {
  if (!providers.has(service)) providers.set(service, ok("GET", `/services/${encodeURIComponent(service)}/provider`).then((a) => a.json()));
  return providers.get(service).catch((error) => {
    providers.delete(service);
    throw error;
  });
}

/** What each variant of a manifest means (docs/contract.md): which generation of the platform calls the provider. */
const VARIANTS = {
  A: "the spec's calls: plans, teams, per-unit binds",
  B: "the oldest platform: no plans, binds by hostname",
  current: "today's platform: Variant A plus updates, job binds, JSON bodies",
};
const variantCell = (variant) => h("td", { title: VARIANTS[variant] ?? "" }, variant);

async function loadServices(where, stale, force = false) {
  const [name] = where.parts;
  $("service-detail").hidden = name === undefined;
  document.querySelector("#page-services .list").hidden = name !== undefined;
  if (name !== undefined) return loadService(name, stale);
  if (!$("services-rows").hasChildNodes()) loading("services-rows");
  const [services, lines] = await Promise.all([ok("GET", "/services").then((a) => a.json()), healthLines(force)]);
  const described = await Promise.all(services.map((entry) => providerOf(entry.service)));
  if (stale()) return;
  $("services-rows").replaceChildren(
    ...services.map((entry, index) =>
      row("services-rows", {}, [
        h("th", { scope: "row" }, h("a", { href: link("services", entry.service) }, entry.service)),
        variantCell(described[index].variant),
        h("td", {}, h("code", {}, described[index].endpoint)),
        healthCell(lines, entry.service),
        h("td", {}, h("a", { href: `${link("instances")}?service=${encodeURIComponent(entry.service)}` }, String(entry.instances.length))),
      ]),
    ),
  );
  if (services.length === 0) {
    $("services-rows").append(emptyRow("services-rows", "No services yet. Register your provider's service with ",
      h("code", {}, "npx provider-kit manifest"), " and ", h("code", {}, "POST /services"), ", or start the platform with ", h("code", {}, "--seed"), "."));
  }
  loaded("services-rows");
  $("health").textContent = lines ? [...lines].map(([component, state]) => `${component}: ${state}`).join("\n") : "Platform health: not available (this platform does not serve GET /healthcheck/?check=all).";
}

$("health-check").addEventListener("click", () => loadServices(route, () => false, true));

const plansRead = new Map();

/** The service's plans (a provider call, once per service and pool in a session). */
function plansOf(service, pool) {
  const key = `${service}?${pool ?? ""}`;
  if (!plansRead.has(key)) {
    const query = pool ? `?pool=${encodeURIComponent(pool)}` : "";
    plansRead.set(key, ok("GET", `/services/${encodeURIComponent(service)}/plans${query}`).then((a) => a.json()));
  }
  return plansRead.get(key).catch((error) => {
    plansRead.delete(key);
    throw error;
  });
}

async function loadService(name, stale) {
  $("service-title").textContent = name;
  const [provider, services, lines] = await Promise.all([providerOf(name), ok("GET", "/services").then((a) => a.json()), healthLines(false)]);
  const plans = provider.multiCluster ? undefined : await plansOf(name).catch((error) => error);
  if (stale()) return;
  const state = healthOf(lines, name);
  $("service-facts").replaceChildren(
    ...fact("Variant", VARIANTS[provider.variant] ? `${provider.variant}: ${VARIANTS[provider.variant]}` : provider.variant),
    ...fact("Provider", h("code", {}, provider.endpoint)),
    ...fact("Health", state === undefined ? "not reported" : h("span", { class: `badge ${state.startsWith("WORKING") ? "good" : "bad"}` }, state)),
    ...fact("Teams", provider.teams.join(", ") || "none"),
    ...fact("Clusters", provider.multiCluster ? "multi-cluster: each instance lives in a pool" : "one"),
  );
  $("service-plans").replaceChildren(
    ...(plans === undefined ? [h("li", {}, "Its plans depend on the pool: choose a pool when you create an instance.")]
      : plans instanceof Error ? [h("li", { class: "failed" }, `The plans could not be read: ${advice(plans)}`)]
      : plans.length === 0 ? [h("li", {}, "The provider lists no plans: instances get its default.")]
      : plans.map((plan) => h("li", {}, h("strong", {}, plan.name), plan.description ? ` — ${plan.description}` : ""))),
  );
  const instances = services.find((entry) => entry.service === name)?.instances ?? [];
  $("service-instances").replaceChildren(
    ...instances.map((instance) => h("li", {}, h("a", { href: link("instances", name, instance) }, instance))),
  );
  if (instances.length === 0) $("service-instances").append(h("li", { class: "empty" }, "No instances of this service yet."));
  $("service-create").setAttribute("href", `${link("instances")}?service=${encodeURIComponent(name)}`);
  $("service-create").textContent = `Create an instance of ${name}`;
}

// Instances ---------------------------------------------------------------------------------

/**
 * What the provider last said of each instance: `{data, status, at}`. Read when a page shows the
 * instance and the entry is older than FRESH_MS, after an action on it, or while it is pending.
 */
const known = new Map();

/**
 * tsuru's words for a status answered 404, which the platform's API keeps for its clients (tsuru
 * prints them); the console says what they mean: the provider forgot the instance, or never had it.
 */
const UNKNOWN_TO_PROVIDER = "not implemented for this service";

function stateOf(text) {
  // `Service instance "<i>" is <state>`, with no final dot, as the platform's serviceInstanceStatus.
  const match = /^Service instance ".*?" is (.+)$/s.exec(text.trim());
  const said = match ? match[1] : text.trim();
  // "pending (restoring snapshot, 40%)": a provider's progress follows the state.
  const state = said === "up" ? "up" : said === "pending" || said.startsWith("pending (") ? "pending" : "down";
  return { state, text: said === UNKNOWN_TO_PROVIDER ? "the provider does not know this instance (404)" : said };
}

async function readStatus(name) {
  const answer = await api("GET", `/services/instances/${encodeURIComponent(name)}/status`);
  const status = answer.status === 200 ? stateOf(answer.text) : { state: "down", text: answer.text.trim() };
  if (status.text === "down") status.text = `down: ${await downReason(name)}`;
  return status;
}

/** The platform says only "down": the reason is in the provider's answer to the newest status call. */
async function downReason(name) {
  const calls = (await ok("GET", `/provider-calls?instance=${encodeURIComponent(name)}&limit=20`)).json();
  const call = calls.reverse().find((item) => item.path.endsWith("/status"));
  if (!call) return "no answer recorded";
  return call.status === undefined ? call.error : `${call.status} ${(call.answer ?? "").trim().slice(0, 200) || "(empty answer)"}`;
}

/** The instance's record and provider info, and its status; `fresh`: read again unless just read. */
async function instanceOf(name, fresh) {
  const entry = known.get(name);
  if (entry && (!fresh || Date.now() - entry.at < FRESH_MS)) return entry;
  const [data, status] = await Promise.all([ok("GET", `/services/instances/${encodeURIComponent(name)}`).then((a) => a.json()), readStatus(name)]);
  const read = { data, status, at: Date.now() };
  known.set(name, read);
  return read;
}

/**
 * Only a pending instance's status is read on the timer, the person is waiting for it; at most
 * every PENDING_MS, so a refresh every POLL_MS does not become a provider call every POLL_MS.
 */
async function statusWhilePending(name) {
  const entry = known.get(name);
  if (!entry || entry.status.state !== "pending" || Date.now() - (entry.statusAt ?? entry.at) < PENDING_MS) return;
  known.set(name, { ...entry, status: await readStatus(name), statusAt: Date.now() });
}

/** The provider's info (`GET /resources/<i>`), one line per label; none: a dash. */
function infoList(info) {
  const entries = Object.entries(info ?? {});
  if (entries.length === 0) return "—";
  return h("ul", { class: "info" }, entries.map(([label, value]) => h("li", {}, `${label}: ${value}`)));
}

const poolText = (data) => (data.pool ? `${data.pool} (cluster ${data.cluster || "none"})` : "—");
const statusBadge = (status) => h("span", { class: `status ${status.state}` }, status.text);

async function allInstances() {
  const services = (await ok("GET", "/services/instances")).json();
  return services.flatMap((entry) => entry.instances.map((name) => ({ name, service: entry.service })));
}

async function loadInstances(where, stale) {
  const [service, name] = where.parts;
  const detail = service !== undefined && name !== undefined;
  $("instance-detail").hidden = !detail;
  document.querySelector("#page-instances .list").hidden = detail;
  if (detail) return loadInstance(service, name, stale, true);
  await fillServiceChoice(where.query.get("service"));
  if (!$("instances-rows").hasChildNodes()) loading("instances-rows");
  await instanceRows(stale, true);
}

async function pollInstances(where, stale) {
  const [service, name] = where.parts;
  if (service !== undefined && name !== undefined) return loadInstance(service, name, stale, false);
  await instanceRows(stale, false);
}

/**
 * The list's rows. `fresh` (a person opened the page): the shown instances' info and status are
 * read unless just read; else (the timer) only new instances' and pending ones' statuses.
 */
async function instanceRows(stale, fresh) {
  const filter = $("instance-filter").value.trim();
  const everyInstance = await allInstances();
  const all = everyInstance.filter((item) => item.name.includes(filter)).sort((a, b) => a.name.localeCompare(b.name));
  const state = pages.instances;
  const pageCount = Math.ceil(all.length / PAGE);
  state.page = Math.min(Math.max(state.page, 1), Math.max(pageCount, 1));
  const shown = all.slice((state.page - 1) * PAGE, state.page * PAGE);
  const read = await Promise.all(shown.map(async (item) => {
    if (!fresh) await statusWhilePending(item.name);
    return instanceOf(item.name, fresh).catch((error) => ({ failed: error }));
  }));
  if (stale()) return;
  const rows = shown.map((item, index) => {
    const { data, status, failed } = read[index];
    const name = h("th", { scope: "row" }, h("a", { href: link("instances", item.service, item.name) }, item.name));
    if (failed) return row("instances-rows", {}, [name, h("td", {}, item.service), h("td", { colspan: "6", class: "failed" }, advice(failed))]);
    return row("instances-rows", {}, [
      name,
      h("td", {}, h("a", { href: link("services", item.service) }, item.service)),
      h("td", {}, data.planname || "—"),
      h("td", {}, poolText(data)),
      h("td", {}, data.teamowner ?? "—"),
      h("td", {}, statusBadge(status)),
      h("td", {}, data.apps.length ? data.apps.join(", ") : "none"),
      h("td", {}, infoList(data.info)),
    ]);
  });
  $("instances-rows").replaceChildren(...rows);
  if (rows.length === 0) {
    $("instances-rows").append(filter ? emptyRow("instances-rows", "No instance matches.")
      : emptyRow("instances-rows", "No instances yet. ", h("button", { type: "button", class: "link", onclick: () => $("instance-name").focus() }, "Create one"), " with the form above."));
  }
  loaded("instances-rows");
  pager($("instances-pager"), state.page, pageCount, (page) => { state.page = page; instanceRows(() => false, true); });
}

$("instances-reload").addEventListener("click", () => {
  known.clear();
  instanceRows(() => false, true);
});

/** `service/instance` whose actions are on screen: the timer leaves them be, so typed values and answers stay. */
let actionsShown;

async function loadInstance(service, name, stale, fresh) {
  if (fresh) {
    actionsShown = undefined;
    $("instance-title").textContent = name;
    $("instance-service-link").textContent = service;
    $("instance-service-link").setAttribute("href", link("services", service));
    if (!$("instance-facts").hasChildNodes() || $("instance-facts").dataset.instance !== name) {
      $("instance-facts").replaceChildren(h("dt", {}, "Status"), h("dd", {}, h("span", { class: "spinner", "aria-hidden": "true" }), " Loading…"));
      $("instance-story").replaceChildren();
      $("instance-apps").replaceChildren();
      $("instance-actions").replaceChildren();
    }
  } else {
    await statusWhilePending(name);
  }
  const listed = (await allInstances()).find((item) => item.name === name && item.service === service);
  if (!listed) {
    if (stale()) return;
    $("instance-facts").replaceChildren();
    $("instance-actions").replaceChildren();
    $("instance-story").replaceChildren();
    $("instance-apps").replaceChildren(h("li", { class: "empty" }, `There is no instance ${name} of ${service} you may see: it may have been removed. `,
      h("a", { href: link("instances") }, "See the instances")));
    return;
  }
  const [{ data, status }, calls] = await Promise.all([
    instanceOf(name, fresh),
    ok("GET", `/provider-calls?instance=${encodeURIComponent(name)}&limit=200`).then((a) => a.json()),
  ]);
  if (stale()) return;
  $("instance-facts").dataset.instance = name;
  $("instance-facts").replaceChildren(
    ...fact("Status", statusBadge(status)),
    ...fact("Service", h("a", { href: link("services", service) }, service)),
    ...fact("Plan", data.planname || "—"),
    ...fact("Pool", poolText(data)),
    ...fact("Owner team", data.teamowner ?? "—"),
    ...fact("Teams", data.teams.join(", ")),
    ...fact("Info", infoList(data.info)),
  );
  $("instance-apps").replaceChildren(...data.apps.map((app) => h("li", {}, h("a", { href: link("apps", app) }, app))));
  if (data.apps.length === 0) {
    $("instance-apps").append(h("li", { class: "empty" }, "No app uses it yet. ", h("a", { href: link("apps") }, "Bind it from an app's page"), "."));
  }
  const story = storyItems(calls, say);
  // Keep the calls the person opened open.
  const open = new Set([...$("instance-story").querySelectorAll("details[open]")].map((details) => details.parentElement.dataset.call));
  $("instance-story").replaceChildren(...story);
  for (const item of $("instance-story").querySelectorAll("[data-call]")) if (open.has(item.dataset.call)) item.querySelector("details").open = true;
  if (story.length === 0) $("instance-story").append(h("li", { class: "empty" }, "Nothing done to it yet that reached its provider."));
  if (actionsShown !== `${service}/${name}`) {
    actionsShown = `${service}/${name}`;
    $("instance-actions").replaceChildren(h("p", {}, h("span", { class: "spinner", "aria-hidden": "true" }), " Reading the actions…"));
    const provider = await providerOf(service);
    const panel = await actionsPanel({ service, instance: name }, { api, say, owner: provider.owner });
    if (!stale()) $("instance-actions").replaceChildren(...panel);
  }
}

$("instance-reload").addEventListener("click", () => {
  const [service, name] = route.parts;
  known.delete(name);
  loadInstance(service, name, () => false, false).catch((error) => say(`Could not read ${name}: ${advice(error)}`, true));
});

/** The services offered in the create form; `wanted` (from the address) chosen. */
async function fillServiceChoice(wanted) {
  const services = (await ok("GET", "/services")).json();
  const select = $("instance-service");
  const chosen = wanted ?? select.value;
  select.replaceChildren(...services.map((entry) => h("option", { value: entry.service, selected: entry.service === chosen }, entry.service)));
  if (services.length === 0) select.append(h("option", { value: "" }, "no service registered yet"));
  await fillPlaceChoices();
}

/** Bumped by each fill of the pool and plan choices: a slower earlier one (the page's load) leaves them to the newest. */
let placeFills = 0;

/** The pool (multi-cluster services) and plan choices for the chosen service: the plans are the provider's, for that pool. */
async function fillPlaceChoices() {
  const mine = ++placeFills;
  const service = $("instance-service").value;
  const plan = $("instance-plan");
  hideError($("instance-plan-error"));
  if (!service) return plan.replaceChildren(h("option", { value: "" }, "—"));
  const provider = await providerOf(service);
  if (mine !== placeFills) return;
  $("instance-pool-field").hidden = !provider.multiCluster;
  let pool;
  if (provider.multiCluster) {
    const select = $("instance-pool");
    const pools = [...new Set((await ok("GET", "/pools")).json().flatMap((entry) => entry.Pools))].sort();
    if (mine !== placeFills) return;
    const chosen = select.value;
    select.replaceChildren(h("option", { value: "" }, "Choose a pool"), ...pools.map((name) => h("option", { value: name, selected: name === chosen }, name)));
    pool = select.value || undefined;
    if (!pool) return plan.replaceChildren(h("option", { value: "" }, "Choose a pool first"));
  }
  plan.replaceChildren(h("option", { value: "" }, "Reading the plans…"));
  plan.setAttribute("aria-busy", "true");
  try {
    const plans = await plansOf(service, pool);
    if (mine !== placeFills) return;
    plan.replaceChildren(
      h("option", { value: "" }, plans.length === 0 ? "The provider's default (it lists no plans)" : "The provider's default"),
      ...plans.map((item) => h("option", { value: item.name }, item.description ? `${item.name} — ${item.description}` : item.name)),
    );
  } catch (error) {
    if (mine !== placeFills) return;
    plan.replaceChildren(h("option", { value: "" }, "The provider's default"));
    fieldError(plan, `The plans could not be read: ${advice(error)}`);
  } finally {
    if (mine === placeFills) plan.removeAttribute("aria-busy");
  }
}

$("instance-service").addEventListener("change", () => fillPlaceChoices().catch((error) => fieldError($("instance-plan"), advice(error))));
$("instance-pool").addEventListener("change", () => fillPlaceChoices().catch((error) => fieldError($("instance-plan"), advice(error))));
$("instance-name").addEventListener("input", () => {
  $("instance-name").removeAttribute("aria-invalid");
  hideError($("instance-name-error"));
});

/** The platform's checks, made before sending: each failure beside its field, nothing sent. */
function checkInstanceForm(wanted) {
  const problems = [];
  if (wanted.name === "") problems.push([$("instance-name"), "Give the instance a name."]);
  else if (!INSTANCE_NAME.test(wanted.name)) problems.push([$("instance-name"), `"${wanted.name}" is not a name the platform takes: start with a letter, then letters, digits, "-" or "_" (at least 2 characters).`]);
  if (!wanted.service_name) problems.push([$("instance-service"), "Register a service first."]);
  if (!$("instance-pool-field").hidden && !wanted.pool) problems.push([$("instance-pool"), "Choose the pool the instance lives in."]);
  for (const [field, text] of problems) {
    if ($(`${field.id}-error`)) fieldError(field, text);
    else showError($("instance-form-error"), text);
  }
  problems[0]?.[0].focus();
  return problems.length === 0;
}

$("instance-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.target;
  clearFieldErrors(form);
  const fields = new FormData(form);
  const wanted = { name: String(fields.get("name") ?? "").trim(), service_name: String(fields.get("service_name") ?? "") };
  for (const optional of ["plan", "owner", "pool"]) if (fields.get(optional)) wanted[optional] = String(fields.get(optional)).trim();
  if (!$("instance-pool-field").hidden) wanted.pool ??= "";
  if (!checkInstanceForm(wanted)) return;
  if (wanted.pool === "") delete wanted.pool;
  act(`Creating the instance ${wanted.name}`, async () => {
    await ok("POST", "/services/instances", { json: wanted });
    $("instance-name").value = "";
    $("instance-owner").value = "";
  }, $("instance-form-error"), { failedLink: { href: `${link("calls")}?instance=${encodeURIComponent(wanted.name)}`, text: "See its calls" } });
});
$("instance-filter").addEventListener("input", () => { pages.instances.page = 1; instanceRows(() => false, true); });

// Apps --------------------------------------------------------------------------------------

async function pollApps(where, stale) {
  const [selected] = where.parts;
  $("app-detail").hidden = selected === undefined;
  document.querySelector("#page-apps .list").hidden = selected !== undefined;
  if (selected !== undefined) return refreshApp(selected, stale);
  const filter = $("app-filter").value.trim();
  if (!$("apps-rows").hasChildNodes()) loading("apps-rows");
  const apps = (await ok("GET", "/apps")).json().filter((app) => app.Name.includes(filter));
  if (stale()) return;
  const state = pages.apps;
  const pageCount = Math.ceil(apps.length / PAGE);
  state.page = Math.min(Math.max(state.page, 1), Math.max(pageCount, 1));
  const shown = apps.slice((state.page - 1) * PAGE, state.page * PAGE);
  $("apps-rows").replaceChildren(
    ...shown.map((app) =>
      row("apps-rows", {}, [
        h("th", { scope: "row" }, h("a", { href: link("apps", app.Name) }, app.Name)),
        h("td", {}, app.Ip),
        h("td", {}, String(app.Units.length)),
      ]),
    ),
  );
  if (shown.length === 0) {
    $("apps-rows").append(filter ? emptyRow("apps-rows", "No app matches.")
      : emptyRow("apps-rows", "No apps yet. Create one with ", h("code", {}, "tsuru app create NAME"), " against this platform; it shows here at once."));
  }
  loaded("apps-rows");
  pager($("apps-pager"), state.page, pageCount, (page) => { state.page = page; poll(); });
}

/** Private values shown after a click, by variable name, for the app shown. */
const revealed = new Map();
let revealedFor;

const selectedApp = () => route.parts[0];

async function reveal(name) {
  const variable = (await ok("GET", `/apps/${encodeURIComponent(selectedApp())}/env/${encodeURIComponent(name)}`)).json();
  revealed.set(name, variable.value);
  return variable.value;
}

async function refreshApp(name, stale) {
  if (revealedFor !== name) {
    revealed.clear();
    revealedFor = name;
    $("tsuru-services").hidden = true;
    $("run-output").hidden = true;
    $("app-title").textContent = name;
  }
  const path = encodeURIComponent(name);
  const [app, env, bound, instances] = await Promise.all([
    ok("GET", `/apps/${path}`).then((a) => a.json()),
    ok("GET", `/apps/${path}/env`).then((a) => a.json()),
    ok("GET", `/services/instances?app=${path}`).then((a) => a.json()),
    allInstances(),
  ]);
  if (stale()) return;
  $("app-title").textContent = app.Name;
  $("app-units").replaceChildren(...app.Units.map((unit) => h("li", {}, `${unit.Name} at ${unit.Ip} (${unit.State})`)));
  if (app.Units.length === 0) $("app-units").append(h("li", { class: "empty" }, "No units: add one to run it."));
  const boundNames = bound.flatMap((entry) => entry.instances.map((instance) => ({ instance, service: entry.service })));
  $("app-bound").replaceChildren(
    ...boundNames.map(({ instance, service }) =>
      h("li", {}, h("a", { href: link("instances", service, instance) }, instance), ` (${service}) `,
        h("button", { type: "button", "aria-label": `Unbind ${instance}`, onclick: () => act(`Unbinding ${instance} from ${name}`, () => ok("DELETE", `/services/instances/${encodeURIComponent(instance)}/${path}`), $("bind-error"), { failedLink: { href: link("instances", service, instance), text: "See what happened" }, forget: instance }) }, "Unbind"),
      ),
    ),
  );
  const select = $("bind-instance");
  const chosen = select.value;
  const bindable = instances.filter((item) => !boundNames.some((b) => b.instance === item.name));
  select.replaceChildren(...bindable.map((item) => h("option", { value: item.name, selected: item.name === chosen }, `${item.name} (${item.service})`)));
  if (boundNames.length === 0) {
    $("app-bound").append(h("li", { class: "empty" }, bindable.length > 0 ? "No instance bound yet: choose one below and bind it." : "No instance bound yet, and none to bind. ",
      bindable.length > 0 ? undefined : h("a", { href: link("instances") }, "Create an instance")));
  }
  $("bind-form").hidden = bindable.length === 0;

  $("env-rows").replaceChildren(
    ...env.filter((variable) => variable.name !== "TSURU_SERVICES").map((variable) => {
      const value = variable.public ? variable.value : revealed.get(variable.name);
      const cell = value !== undefined
        ? h("td", {}, h("code", { class: "value" }, value))
        : h("td", {}, h("span", { class: "masked" }, "private "),
            h("button", { type: "button", "aria-label": `Show ${variable.name}`, onclick: async (event) => {
              const cellShown = event.target.closest("td");
              const shown = await reveal(variable.name).catch((error) => showError(cellShown.appendChild(h("span", { class: "form-error", role: "alert" })), `Could not show ${variable.name}: ${advice(error)}`));
              if (shown !== undefined) cellShown.replaceChildren(h("code", { class: "value" }, shown));
            } }, "Show"));
      return row("env-rows", {}, [h("th", { scope: "row" }, h("code", {}, variable.name)), cell]);
    }),
  );
  if (env.length === 0) $("env-rows").append(emptyRow("env-rows", "No variables: binding an instance adds its own."));
  if (revealed.has("TSURU_SERVICES")) showServices(revealed.get("TSURU_SERVICES"));
}

function showServices(value) {
  let text = value;
  try {
    text = JSON.stringify(JSON.parse(value), null, 2);
  } catch {
    // Shown as it is.
  }
  $("tsuru-services").textContent = text;
  $("tsuru-services").hidden = false;
}

$("app-filter").addEventListener("input", () => { pages.apps.page = 1; poll(); });
$("services-reveal").addEventListener("click", () => reveal("TSURU_SERVICES").then(showServices, (error) => say(`Could not show TSURU_SERVICES: ${advice(error)}`, true)));
$("unit-add").addEventListener("click", () => act(`Adding a unit to ${selectedApp()}`, () => ok("PUT", `/apps/${encodeURIComponent(selectedApp())}/units`, { text: "1" }), $("units-error")));
$("unit-remove").addEventListener("click", () => act(`Removing a unit of ${selectedApp()}`, () => ok("DELETE", `/apps/${encodeURIComponent(selectedApp())}/units`, { text: "1" }), $("units-error")));
$("bind-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const instance = $("bind-instance").value;
  if (!instance) return showError($("bind-error"), "Choose an instance to bind.");
  const service = $("bind-instance").selectedOptions[0]?.textContent.replace(/^.* \((.*)\)$/, "$1");
  act(`Binding ${instance} to ${selectedApp()}`, () => ok("PUT", `/services/instances/${encodeURIComponent(instance)}/${encodeURIComponent(selectedApp())}`), $("bind-error"),
    { failedLink: { href: link("instances", service, instance), text: "See what happened" }, forget: instance });
});
$("run-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const output = $("run-output");
  output.hidden = false;
  output.textContent = "Running…";
  output.classList.remove("failed");
  const answer = await api("POST", `/apps/${encodeURIComponent(selectedApp())}/run?once=${$("run-once").checked}`, { text: $("run-command").value }).catch((error) => ({ status: 0, text: error.message }));
  output.textContent = answer.text || "(no output)";
  output.classList.toggle("failed", answer.status !== 200);
  say(answer.status === 200 ? "The command ran." : `The command failed (HTTP ${answer.status}).`, answer.status !== 200);
});

// Provider calls ----------------------------------------------------------------------------

const CALL_FILTERS = ["service", "instance", "app"];

/** `#/calls/<id>` opens one call above the list; `#/calls?instance=x` filters the list. */
async function loadCalls(where, stale) {
  const filter = Object.fromEntries(CALL_FILTERS.map((name) => [name, where.query.get(name) ?? ""]).filter(([, value]) => value !== ""));
  for (const name of CALL_FILTERS) $(`calls-${name}`).value = filter[name] ?? "";
  const key = JSON.stringify(filter);
  if (pages.calls.filterKey !== key) pages.calls.cursors = [];
  pages.calls.filterKey = key;
  const [id] = where.parts;
  $("call-detail").hidden = id === undefined;
  if (id !== undefined) await showCall(id, stale);
  await pollCalls(where, stale);
}

async function showCall(id, stale) {
  $("call-title").textContent = `Call ${id}`;
  const number = Number(id);
  const calls = /^\d+$/.test(id) ? (await ok("GET", `/provider-calls?before=${number + 1}&limit=1`)).json() : [];
  if (stale()) return;
  const call = calls.find((item) => item.id === number);
  if (!call) {
    $("call-body").replaceChildren(h("p", {}, `There is no call ${id} you may see: the timeline may have been cleared. `, h("a", { href: link("calls") }, "See every call")));
    return;
  }
  $("call-title").textContent = `${call.method} ${call.path} → ${call.status ?? "failed"}`;
  $("call-body").replaceChildren(
    h("p", {}, h("time", { datetime: call.at }, call.at.replace("T", " ").slice(0, 23)), ` · ${call.durationMs} ms · `,
      call.operation ? h("code", {}, call.operation.label) : "at start-up", " · ",
      call.instance ? h("a", { href: link("instances", call.service, call.instance) }, `instance ${call.instance}`) : `service ${call.service}`),
    ...callBody(call, say),
  );
}

async function pollCalls(where, stale) {
  const state = pages.calls;
  const filter = JSON.parse(state.filterKey ?? "{}");
  const query = new URLSearchParams({ ...filter, limit: String(CALLS_PAGE) });
  const before = state.cursors[state.cursors.length - 1];
  if (before !== undefined) query.set("before", String(before));
  const answer = await ok("GET", `/provider-calls?${query}`);
  if (stale()) return;
  const calls = answer.json();
  const total = Number(answer.headers.get("X-Total-Count") ?? calls.length);
  // Keep calls the user opened open across refreshes.
  const open = new Set([...$("calls-rows").querySelectorAll("details[open]")].map((details) => details.parentElement.dataset.call));
  $("calls-rows").replaceChildren(...timelineItems(calls, say));
  for (const item of $("calls-rows").querySelectorAll("[data-call]")) if (open.has(item.dataset.call)) item.querySelector("details").open = true;
  const page = state.cursors.length + 1;
  $("calls-count").textContent = `${total} call${total === 1 ? "" : "s"} recorded; newest first, ${CALLS_PAGE} a page.`;
  if (calls.length === 0) {
    $("calls-rows").append(h("li", { class: "empty" }, Object.keys(filter).length > 0 ? "No calls match: " : "No calls yet: ",
      h("a", { href: link("instances") }, "create an instance"), " and its calls show here."));
  }
  $("calls-pager").replaceChildren(
    h("button", { type: "button", disabled: page === 1, onclick: () => { state.cursors.pop(); poll(); } }, "Newer"),
    h("span", {}, ` Page ${page} of ${Math.max(Math.ceil(total / CALLS_PAGE), 1)} `),
    h("button", { type: "button", disabled: calls.length < CALLS_PAGE || page * CALLS_PAGE >= total, onclick: () => { state.cursors.push(calls[0].id); poll(); } }, "Older"),
  );
}

$("calls-filter").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const query = new URLSearchParams([...form].map(([name, value]) => [name, String(value).trim()]).filter(([, value]) => value !== ""));
  go(`${link("calls")}${query.size > 0 ? `?${query}` : ""}`);
});

// Log ---------------------------------------------------------------------------------------

async function pollLog(where, stale) {
  const apps = (await ok("GET", "/apps")).json();
  if (stale()) return;
  const select = $("log-app");
  const chosen = where.parts[0] ?? select.value;
  select.replaceChildren(...apps.map((app) => h("option", { value: app.Name, selected: app.Name === chosen }, app.Name)));
  if (!select.value) {
    return $("log-rows").replaceChildren(emptyRow("log-rows", "No apps yet: an app's log shows here once it exists. ", h("a", { href: link("apps") }, "See the apps")));
  }
  const query = new URLSearchParams({ lines: $("log-lines").value || "100" });
  if ($("log-source").value.trim()) query.set("source", $("log-source").value.trim());
  if ($("log-unit").value.trim()) query.set("unit", $("log-unit").value.trim());
  const answer = await api("GET", `/apps/${encodeURIComponent(select.value)}/log?${query}`);
  if (stale()) return;
  if (answer.status === 404 && answer.text.startsWith("The platform has no route")) {
    return $("log-rows").replaceChildren(emptyRow("log-rows", "The app log is not available on this platform."));
  }
  if (answer.status !== 200) throw new ApiError(answer.status, answer.text.trim());
  const entries = answer.json();
  // The sources and units seen so far, offered as the filters' choices.
  const seen = (list, values) => {
    const listed = new Set([...list.options].map((option) => option.value));
    for (const value of values) if (!listed.has(value)) list.append(h("option", { value }));
  };
  seen($("log-sources"), entries.map((entry) => entry.Source));
  seen($("log-units"), entries.map((entry) => entry.Unit));
  $("log-rows").replaceChildren(
    ...entries.map((entry) => row("log-rows", {}, [h("td", {}, h("time", { datetime: entry.Date }, entry.Date.replace("T", " ").slice(0, 23))), h("td", {}, entry.Source), h("td", {}, entry.Unit), h("td", {}, h("pre", { class: "message" }, entry.Message))])),
  );
  if (entries.length === 0) $("log-rows").append(emptyRow("log-rows", "No entries yet: add a unit or run a command from the app's page."));
}

$("log-app").addEventListener("change", () => go(link("log", $("log-app").value)));
$("log-filter").addEventListener("submit", (event) => {
  event.preventDefault();
  if (route.parts[0] !== $("log-app").value) go(link("log", $("log-app").value));
  else poll();
});

// Users (the admin's) -------------------------------------------------------------------------

async function loadUsers(_where, stale) {
  if (!$("users-rows").hasChildNodes()) loading("users-rows");
  const teams = (await ok("GET", "/teams")).json() ?? [];
  const members = await Promise.all(teams.map(async ({ name }) => (await ok("GET", `/teams/${encodeURIComponent(name)}`)).json().users ?? []));
  if (stale()) return;
  $("users-rows").replaceChildren(
    ...teams.map(({ name }, index) => row("users-rows", {}, [h("th", { scope: "row" }, name), h("td", {}, members[index].join(", "))])),
  );
  loaded("users-rows");
}

$("user-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const email = $("user-email").value.trim();
  const password = $("user-password").value;
  act(`Create user ${email}`, async () => {
    await ok("POST", "/users", { json: { email, password } });
    $("user-form").reset();
    await loadUsers(route, () => false);
  }, $("user-error"));
});

// Log in and out ----------------------------------------------------------------------------

function signedIn(email, admin) {
  $("nav-users").hidden = !admin;
  $("login").hidden = true;
  $("nav").hidden = false;
  $("who").hidden = false;
  $("who-email").textContent = email;
  show(false);
}

function logOut(message) {
  token = null;
  sessionStorage.removeItem("token");
  $("nav").hidden = true;
  $("who").hidden = true;
  for (const section of document.querySelectorAll(".page")) section.hidden = true;
  // The next user reads everything again: what one may see is not what another may.
  actionsShown = undefined;
  known.clear();
  providers.clear();
  plansRead.clear();
  health = undefined;
  $("instance-actions").replaceChildren();
  $("login").hidden = false;
  say(message ?? "");
}

$("login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  hideError($("login-error"));
  const email = $("login-email").value.trim();
  if (email === "" || $("login-password").value === "") return showError($("login-error"), "Give your email and password.");
  const answer = await api("POST", `/users/${encodeURIComponent(email)}/tokens`, { json: { password: $("login-password").value } })
    .catch((error) => ({ status: 0, text: `${error.message}: check that the platform is still running.` }));
  if (answer.status !== 200) return showError($("login-error"), `Log in failed: ${answer.text.trim()}`);
  const { token: given, is_admin: admin } = answer.json();
  token = given;
  sessionStorage.setItem("token", token);
  $("login-password").value = "";
  say("");
  signedIn(email, admin === true);
});

$("logout").addEventListener("click", async () => {
  await api("DELETE", "/users/tokens").catch(() => {});
  logOut("Logged out.");
});

window.addEventListener("hashchange", () => show(true));

async function start() {
  if (!token) return logOut();
  const answer = await api("GET", "/users/info").catch(() => undefined);
  if (answer?.status === 200) {
    const { Email, Teams } = answer.json();
    signedIn(Email, (Teams ?? []).includes("admin"));
  }
}

setInterval(poll, POLL_MS);
start();
