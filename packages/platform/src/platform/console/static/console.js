// The platform console: a client of the platform's API and nothing else. It logs in with
// POST /users/<email>/tokens, then calls the same routes as any client, with the bearer token.
// Data from the API (and so from providers) only ever reaches the page as text nodes.

import { actionsPanel } from "./actions.js";
import { h } from "./dom.js";

const POLL_MS = 3000;
const PAGE = 25;
const CALLS_PAGE = 50;
/** Ticks between status calls for instances already up or down (pending ones: every tick). */
const SETTLED_EVERY = 10;

const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem("token");
let current = "services";
let tick = 0;
let busy = false;

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

/** Runs an action from a button or form, saying what happened. */
async function act(label, work) {
  say(`${label}…`);
  try {
    await work();
    say(`${label}: done.`);
  } catch (error) {
    say(`${label} failed: ${error.message}`, true);
  }
  details.clear();
  await refresh(true);
}

// Pages -------------------------------------------------------------------------------------

const pages = {
  services: { refresh: refreshServices },
  instances: { refresh: refreshInstances, page: 1 },
  apps: { refresh: refreshApps, page: 1 },
  calls: { refresh: refreshCalls, cursors: [], filter: {} },
  log: { refresh: refreshLog },
  users: { refresh: refreshUsers },
};

function show(name, focus) {
  details.clear();
  current = Object.hasOwn(pages, name) ? name : "services";
  for (const section of document.querySelectorAll(".page")) section.hidden = section.id !== `page-${current}`;
  for (const link of document.querySelectorAll("#nav a")) {
    if (link.getAttribute("href") === `#${current}`) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (focus) {
    say("");
    $(`${current}-title`).focus();
  }
  refresh(true);
}

async function refresh(force = false) {
  if (!token || (busy && !force) || document.hidden) return;
  busy = true;
  try {
    await pages[current].refresh();
  } catch (error) {
    if (error.status !== 401) say(`Could not refresh: ${error.message}`, true);
  } finally {
    busy = false;
  }
}

function pager(element, page, pageCount, go) {
  element.replaceChildren(
    h("button", { type: "button", disabled: page <= 1, onclick: () => go(page - 1) }, "Previous"),
    h("span", {}, ` Page ${page} of ${Math.max(pageCount, 1)} `),
    h("button", { type: "button", disabled: page >= pageCount, onclick: () => go(page + 1) }, "Next"),
  );
}

// Services ----------------------------------------------------------------------------------

/** `/healthcheck/?check=all` lines by component name; undefined when the platform does not serve it. */
async function healthLines() {
  const answer = await api("GET", "/healthcheck/?check=all");
  const lines = answer.text.split("\n").map((line) => /^(.+?): (WORKING.*|fail - .*)$/.exec(line.trim())).filter(Boolean);
  if (lines.length === 0) return undefined;
  return new Map(lines.map((match) => [match[1], match[2]]));
}

function healthCell(health, service) {
  if (!health) return h("td", {}, "not available");
  const name = [...health.keys()].find((key) => key === service || key.split(/[\s:/]+/).includes(service));
  if (name === undefined) return h("td", {}, "not reported");
  const state = health.get(name);
  return h("td", { class: state.startsWith("WORKING") ? "good" : "bad" }, state);
}

async function refreshServices() {
  const [services, health] = await Promise.all([ok("GET", "/services").then((a) => a.json()), healthLines()]);
  const providers = await Promise.all(services.map((entry) => ok("GET", `/services/${entry.service}/provider`).then((a) => a.json())));
  $("services-rows").replaceChildren(
    ...services.map((entry, index) =>
      h("tr", {},
        h("th", { scope: "row" }, entry.service),
        h("td", {}, providers[index].variant),
        h("td", {}, h("code", {}, providers[index].endpoint)),
        healthCell(health, entry.service),
        h("td", {}, String(entry.instances.length)),
      ),
    ),
  );
  if (services.length === 0) $("services-rows").append(h("tr", {}, h("td", { colspan: 5 }, "No services yet: register one with POST /services (its YAML manifest).")));
  $("health").textContent = health ? [...health].map(([name, state]) => `${name}: ${state}`).join("\n") : "Platform health: not available (this platform does not serve GET /healthcheck/?check=all).";
}

// Instances ---------------------------------------------------------------------------------

/** Last status seen per instance: `{state, text, tick}`. */
const statuses = new Map();
/**
 * Last details seen per instance (`{data, tick}`): each read calls the provider's info, so they
 * are read again as seldom as settled statuses, and at once after an action or on arrival.
 */
const details = new Map();

function stateOf(text) {
  // `Service instance "<i>" is <state>`, with no final dot, as the platform's serviceInstanceStatus.
  const match = /^Service instance ".*?" is (.+)$/s.exec(text.trim());
  const said = match ? match[1] : text.trim();
  // "pending (restoring snapshot, 40%)": a provider's progress follows the state.
  const state = said === "up" ? "up" : said === "pending" || said.startsWith("pending (") ? "pending" : "down";
  return { state, text: said };
}

async function instanceStatus(name) {
  const known = statuses.get(name);
  if (known && known.state !== "pending" && tick - known.tick < SETTLED_EVERY) return known;
  const answer = await api("GET", `/services/instances/${name}/status`);
  const status = answer.status === 200 ? { ...stateOf(answer.text), tick } : { state: "down", text: answer.text.trim(), tick };
  if (status.text === "down") status.text = `down: ${await downReason(name)}`;
  statuses.set(name, status);
  return status;
}

/** The platform says only "down": the reason is in the provider's answer to the newest status call. */
async function downReason(name) {
  const calls = (await ok("GET", `/provider-calls?instance=${encodeURIComponent(name)}&limit=20`)).json();
  const call = calls.reverse().find((item) => item.path.endsWith("/status"));
  if (!call) return "no answer recorded";
  return call.status === undefined ? call.error : `${call.status} ${(call.answer ?? "").trim().slice(0, 200) || "(empty answer)"}`;
}

async function instanceDetails(name) {
  const known = details.get(name);
  if (known && tick - known.tick < SETTLED_EVERY) return known.data;
  const data = (await ok("GET", `/services/instances/${name}`)).json();
  details.set(name, { data, tick });
  return data;
}

/** The provider's info (`GET /resources/<i>`), one line per label; none: a dash. */
function infoCell(info) {
  const entries = Object.entries(info ?? {});
  if (entries.length === 0) return h("td", {}, "—");
  return h("td", {}, h("ul", { class: "info" }, entries.map(([label, value]) => h("li", {}, `${label}: ${value}`))));
}

async function allInstances() {
  const services = (await ok("GET", "/services/instances")).json();
  return services.flatMap((entry) => entry.instances.map((name) => ({ name, service: entry.service })));
}

async function refreshInstances() {
  const services = (await ok("GET", "/services")).json();
  const select = $("instance-service");
  const chosen = select.value;
  select.replaceChildren(...services.map((entry) => h("option", { value: entry.service, selected: entry.service === chosen }, entry.service)));

  const filter = $("instance-filter").value.trim();
  const everyInstance = await allInstances();
  const all = everyInstance.filter((item) => item.name.includes(filter)).sort((a, b) => a.name.localeCompare(b.name));
  const state = pages.instances;
  const pageCount = Math.ceil(all.length / PAGE);
  state.page = Math.min(Math.max(state.page, 1), Math.max(pageCount, 1));
  const shown = all.slice((state.page - 1) * PAGE, state.page * PAGE);
  const rows = await Promise.all(
    shown.map(async (item) => {
      const [data, status] = await Promise.all([instanceDetails(item.name), instanceStatus(item.name)]);
      const selected = item.name === selectedInstance;
      return h("tr", { class: selected ? "selected" : undefined },
        h("th", { scope: "row" }, h("button", { type: "button", class: "link", "aria-pressed": String(selected), onclick: () => selectInstance(item.name) }, item.name)),
        h("td", {}, item.service),
        h("td", {}, data.planname || "—"),
        h("td", {}, data.pool ? `${data.pool} (cluster ${data.cluster || "none"})` : "—"),
        h("td", {}, data.teamowner ?? "—"),
        h("td", { class: `status ${status.state}` }, status.text),
        h("td", {}, data.apps.length ? data.apps.join(", ") : "none"),
        infoCell(data.info),
      );
    }),
  );
  $("instances-rows").replaceChildren(...rows);
  if (rows.length === 0) $("instances-rows").append(h("tr", {}, h("td", { colspan: 8 }, filter ? "No instance matches." : "No instances yet: create one above.")));
  pager($("instances-pager"), state.page, pageCount, (page) => { state.page = page; refresh(true); });
  const opened = everyInstance.find((item) => item.name === selectedInstance);
  if (!opened) $("instance-detail").hidden = true;
  else if (actionsShown !== `${opened.service}/${opened.name}`) await showActions(opened);
}

let selectedInstance = sessionStorage.getItem("instance") ?? undefined;
/** `service/instance` whose actions are on screen: polls leave them be, so typed values and answers stay. */
let actionsShown;

function selectInstance(name) {
  selectedInstance = name;
  sessionStorage.setItem("instance", name);
  // A click reads the manifest again, even on the instance shown.
  actionsShown = undefined;
  refresh(true).then(() => $("instance-title").focus());
}

async function showActions(target) {
  $("instance-detail").hidden = false;
  $("instance-title").textContent = `Instance ${target.name} (${target.service})`;
  $("instance-actions").replaceChildren(h("p", {}, "Reading the actions…"));
  $("instance-actions").replaceChildren(...(await actionsPanel({ service: target.service, instance: target.name }, { api, say })));
  actionsShown = `${target.service}/${target.name}`;
}

$("instance-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const wanted = { name: form.get("name"), service_name: form.get("service_name") };
  if (form.get("plan")) wanted.plan = form.get("plan");
  if (form.get("owner")) wanted.owner = form.get("owner");
  if (form.get("pool")) wanted.pool = form.get("pool");
  act(`Creating the instance ${wanted.name}`, async () => {
    await ok("POST", "/services/instances", { json: wanted });
    event.target.reset();
  });
});
$("instance-filter").addEventListener("input", () => { pages.instances.page = 1; refresh(true); });

// Apps --------------------------------------------------------------------------------------

let selectedApp = sessionStorage.getItem("app") ?? undefined;

async function refreshApps() {
  const filter = $("app-filter").value.trim();
  const apps = (await ok("GET", "/apps")).json().filter((app) => app.Name.includes(filter));
  const state = pages.apps;
  const pageCount = Math.ceil(apps.length / PAGE);
  state.page = Math.min(Math.max(state.page, 1), Math.max(pageCount, 1));
  const shown = apps.slice((state.page - 1) * PAGE, state.page * PAGE);
  $("apps-rows").replaceChildren(
    ...shown.map((app) =>
      h("tr", { class: app.Name === selectedApp ? "selected" : undefined },
        h("th", { scope: "row" }, h("button", { type: "button", class: "link", "aria-pressed": String(app.Name === selectedApp), onclick: () => selectApp(app.Name) }, app.Name)),
        h("td", {}, app.Ip),
        h("td", {}, String(app.Units.length)),
      ),
    ),
  );
  if (shown.length === 0) $("apps-rows").append(h("tr", {}, h("td", { colspan: 3 }, filter ? "No app matches." : "No apps yet: create one with POST /apps.")));
  pager($("apps-pager"), state.page, pageCount, (page) => { state.page = page; refresh(true); });
  if (selectedApp && apps.some((app) => app.Name === selectedApp)) await refreshApp(selectedApp);
  else $("app-detail").hidden = true;
}

function selectApp(name) {
  selectedApp = name;
  sessionStorage.setItem("app", name);
  $("tsuru-services").hidden = true;
  $("run-output").hidden = true;
  revealed.clear();
  refresh(true).then(() => $("app-title").focus());
}

/** Private values shown after a click, by variable name, for the selected app. */
const revealed = new Map();

async function reveal(name) {
  const variable = (await ok("GET", `/apps/${selectedApp}/env/${encodeURIComponent(name)}`)).json();
  revealed.set(name, variable.value);
  return variable.value;
}

async function refreshApp(name) {
  const [app, env, bound, instances] = await Promise.all([
    ok("GET", `/apps/${name}`).then((a) => a.json()),
    ok("GET", `/apps/${name}/env`).then((a) => a.json()),
    ok("GET", `/services/instances?app=${name}`).then((a) => a.json()),
    allInstances(),
  ]);
  $("app-detail").hidden = false;
  $("app-title").textContent = `App ${app.Name}`;
  $("app-units").replaceChildren(...app.Units.map((unit) => h("li", {}, `${unit.Name} at ${unit.Ip} (${unit.State})`)));
  const boundNames = bound.flatMap((entry) => entry.instances.map((instance) => ({ instance, service: entry.service })));
  $("app-bound").replaceChildren(
    ...boundNames.map(({ instance, service }) =>
      h("li", {}, `${instance} (${service}) `,
        h("button", { type: "button", "aria-label": `Unbind ${instance}`, onclick: () => act(`Unbinding ${instance} from ${name}`, () => ok("DELETE", `/services/instances/${instance}/${name}`)) }, "Unbind"),
      ),
    ),
  );
  if (boundNames.length === 0) $("app-bound").append(h("li", {}, "none"));
  const select = $("bind-instance");
  const chosen = select.value;
  const bindable = instances.filter((item) => !boundNames.some((b) => b.instance === item.name));
  select.replaceChildren(...bindable.map((item) => h("option", { value: item.name, selected: item.name === chosen }, `${item.name} (${item.service})`)));

  $("env-rows").replaceChildren(
    ...env.filter((variable) => variable.name !== "TSURU_SERVICES").map((variable) => {
      const value = variable.public ? variable.value : revealed.get(variable.name);
      const cell = value !== undefined
        ? h("td", {}, h("code", { class: "value" }, value))
        : h("td", {}, h("span", { class: "masked" }, "private "),
            h("button", { type: "button", "aria-label": `Show ${variable.name}`, onclick: async (event) => {
              const shown = await reveal(variable.name).catch((error) => say(`Could not show ${variable.name}: ${error.message}`, true));
              if (shown !== undefined) event.target.closest("td").replaceChildren(h("code", { class: "value" }, shown));
            } }, "Show"));
      return h("tr", {}, h("th", { scope: "row" }, h("code", {}, variable.name)), cell);
    }),
  );
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

$("app-filter").addEventListener("input", () => { pages.apps.page = 1; refresh(true); });
$("services-reveal").addEventListener("click", () => reveal("TSURU_SERVICES").then(showServices, (error) => say(`Could not show TSURU_SERVICES: ${error.message}`, true)));
$("unit-add").addEventListener("click", () => act(`Adding a unit to ${selectedApp}`, () => ok("PUT", `/apps/${selectedApp}/units`, { text: "1" })));
$("unit-remove").addEventListener("click", () => act(`Removing a unit of ${selectedApp}`, () => ok("DELETE", `/apps/${selectedApp}/units`, { text: "1" })));
$("bind-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const instance = $("bind-instance").value;
  if (!instance) return say("Choose an instance to bind.", true);
  act(`Binding ${instance} to ${selectedApp}`, () => ok("PUT", `/services/instances/${instance}/${selectedApp}`));
});
$("run-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const output = $("run-output");
  output.hidden = false;
  output.textContent = "Running…";
  output.classList.remove("failed");
  const answer = await api("POST", `/apps/${selectedApp}/run?once=${$("run-once").checked}`, { text: $("run-command").value }).catch((error) => ({ status: 0, text: error.message }));
  output.textContent = answer.text || "(no output)";
  output.classList.toggle("failed", answer.status !== 200);
  say(answer.status === 200 ? "The command ran." : `The command failed (HTTP ${answer.status}).`, answer.status !== 200);
});

// Provider calls ----------------------------------------------------------------------------

/** Calls of one API request together: the ones it caused, then the undo calls under them. */
function groups(calls) {
  const result = [];
  for (const call of calls) {
    const last = result[result.length - 1];
    // Calls with no operation (the seed, at start-up) group together too.
    if (last && last.operation?.id === call.operation?.id) last.calls.push(call);
    else result.push({ operation: call.operation, calls: [call] });
  }
  return result;
}

const failedCall = (call) => call.status === undefined || call.status >= 400;

function headerLines(headers) {
  return Object.entries(headers).map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(", ") : value}`).join("\n");
}

function callItem(call) {
  const outcome = call.status === undefined ? `failed: ${call.error}` : String(call.status);
  const copy = h("button", { type: "button", onclick: (event) => {
    navigator.clipboard?.writeText(call.curl).then(() => say("curl line copied."), () => say("Select the curl line to copy it.", true));
    event.preventDefault();
  } }, "Copy curl");
  return h("li", { class: `call${failedCall(call) ? " failed" : ""}${call.undo ? " undo" : ""}` },
    h("details", {},
      h("summary", {},
        h("time", { datetime: call.at }, call.at.slice(11, 23)), " ",
        call.undo ? h("strong", {}, "undo ") : undefined,
        // Its failure did not stop the operation: the user forced it.
        call.forced ? h("strong", {}, "forced ") : undefined,
        h("span", { class: "method" }, call.method), " ", h("code", {}, call.path), " → ",
        h("span", { class: "outcome" }, outcome), ` (${call.durationMs} ms) `,
        h("span", { class: "where" }, [call.service, call.instance, call.app].filter(Boolean).join(" / ")),
      ),
      h("h4", {}, "Request"),
      h("pre", {}, `${call.method} ${call.url}${call.path}\n${headerLines(call.requestHeaders)}\n\n${call.requestBody}`),
      h("h4", {}, "Answer"),
      h("pre", {}, call.status === undefined ? call.error : `${call.status}\n\n${call.answer ?? ""}`),
      h("h4", {}, "Reproduce with curl"),
      h("pre", { class: "curl" }, call.curl), copy,
    ),
  );
}

async function refreshCalls() {
  const state = pages.calls;
  const query = new URLSearchParams({ ...state.filter, limit: String(CALLS_PAGE) });
  const before = state.cursors[state.cursors.length - 1];
  if (before !== undefined) query.set("before", String(before));
  const answer = await ok("GET", `/provider-calls?${query}`);
  const calls = answer.json();
  const total = Number(answer.headers.get("X-Total-Count") ?? calls.length);
  const rows = groups(calls).reverse().map((group) => {
    const caused = group.calls.filter((call) => !call.undo);
    const undone = group.calls.filter((call) => call.undo);
    // Operations newest first; the steps of one in the order they were sent, then its undo calls.
    const items = caused.map(callItem);
    if (undone.length > 0) {
      items.push(h("li", { class: "undo-group" }, h("p", {}, `Undone by the platform after a failure (${undone.length} call${undone.length > 1 ? "s" : ""}):`), h("ol", {}, undone.map(callItem))));
    }
    const label = group.operation ? group.operation.label : "at start-up (the seed)";
    return h("li", { class: "operation" }, h("p", { class: "label" }, h("code", {}, label)), h("ol", {}, items));
  });
  // Keep calls the user opened open across refreshes.
  const open = new Set([...$("calls-rows").querySelectorAll("details[open] time")].map((time) => time.parentElement.textContent));
  $("calls-rows").replaceChildren(...rows);
  for (const details of $("calls-rows").querySelectorAll("details")) if (open.has(details.querySelector("summary").textContent)) details.open = true;
  const page = state.cursors.length + 1;
  $("calls-count").textContent = `${total} call${total === 1 ? "" : "s"} recorded; newest first, ${CALLS_PAGE} a page.`;
  if (calls.length === 0) $("calls-rows").append(h("li", {}, "No calls yet."));
  $("calls-pager").replaceChildren(
    h("button", { type: "button", disabled: page === 1, onclick: () => { state.cursors.pop(); refresh(true); } }, "Newer"),
    h("span", {}, ` Page ${page} of ${Math.max(Math.ceil(total / CALLS_PAGE), 1)} `),
    h("button", { type: "button", disabled: calls.length < CALLS_PAGE || page * CALLS_PAGE >= total, onclick: () => { state.cursors.push(calls[0].id); refresh(true); } }, "Older"),
  );
}

$("calls-filter").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  pages.calls.filter = Object.fromEntries([...form].filter(([, value]) => String(value).trim() !== ""));
  pages.calls.cursors = [];
  refresh(true);
});

// Log ---------------------------------------------------------------------------------------

async function refreshLog() {
  const apps = (await ok("GET", "/apps")).json();
  const select = $("log-app");
  const chosen = select.value || selectedApp;
  select.replaceChildren(...apps.map((app) => h("option", { value: app.Name, selected: app.Name === chosen }, app.Name)));
  if (!select.value) return $("log-rows").replaceChildren(h("tr", {}, h("td", { colspan: 4 }, "No apps yet.")));
  const query = new URLSearchParams({ lines: $("log-lines").value || "100" });
  if ($("log-source").value.trim()) query.set("source", $("log-source").value.trim());
  if ($("log-unit").value.trim()) query.set("unit", $("log-unit").value.trim());
  const answer = await api("GET", `/apps/${select.value}/log?${query}`);
  if (answer.status === 404 && answer.text.startsWith("The platform has no route")) {
    return $("log-rows").replaceChildren(h("tr", {}, h("td", { colspan: 4 }, "The app log is not available on this platform.")));
  }
  if (answer.status !== 200) throw new ApiError(answer.status, answer.text.trim());
  const entries = answer.json();
  // The sources and units seen so far, offered as the filters' choices.
  const seen = (list, values) => {
    const known = new Set([...list.options].map((option) => option.value));
    for (const value of values) if (!known.has(value)) list.append(h("option", { value }));
  };
  seen($("log-sources"), entries.map((entry) => entry.Source));
  seen($("log-units"), entries.map((entry) => entry.Unit));
  $("log-rows").replaceChildren(
    ...entries.map((entry) => h("tr", {}, h("td", {}, h("time", { datetime: entry.Date }, entry.Date.replace("T", " ").slice(0, 23))), h("td", {}, entry.Source), h("td", {}, entry.Unit), h("td", {}, h("pre", { class: "message" }, entry.Message)))),
  );
  if (entries.length === 0) $("log-rows").append(h("tr", {}, h("td", { colspan: 4 }, "No entries.")));
}

$("log-filter").addEventListener("submit", (event) => {
  event.preventDefault();
  refresh(true);
});

// Users (the admin's) -------------------------------------------------------------------------

async function refreshUsers() {
  const teams = (await ok("GET", "/teams")).json() ?? [];
  const members = await Promise.all(teams.map(async ({ name }) => (await ok("GET", `/teams/${encodeURIComponent(name)}`)).json().users ?? []));
  $("users-rows").replaceChildren(
    ...teams.map(({ name }, index) => h("tr", {}, h("th", { scope: "row" }, name), h("td", {}, members[index].join(", ")))),
  );
}

$("user-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const email = $("user-email").value.trim();
  const password = $("user-password").value;
  act(`Create user ${email}`, async () => {
    await ok("POST", "/users", { json: { email, password } });
    $("user-form").reset();
  });
});

// Log in and out ----------------------------------------------------------------------------

function signedIn(email, admin) {
  $("nav-users").hidden = !admin;
  $("login").hidden = true;
  $("nav").hidden = false;
  $("who").hidden = false;
  $("who-email").textContent = email;
  show(location.hash.slice(1), false);
}

function logOut(message) {
  token = null;
  sessionStorage.removeItem("token");
  $("nav").hidden = true;
  $("who").hidden = true;
  for (const section of document.querySelectorAll(".page")) section.hidden = true;
  // The next user reads the actions (and the grants they may see) again.
  actionsShown = undefined;
  $("instance-actions").replaceChildren();
  $("login").hidden = false;
  say(message ?? "");
}

$("login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const email = $("login-email").value.trim();
  const answer = await api("POST", `/users/${encodeURIComponent(email)}/tokens`, { json: { password: $("login-password").value } });
  if (answer.status !== 200) return say(`Log in failed: ${answer.text.trim()}`, true);
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

window.addEventListener("hashchange", () => token && show(location.hash.slice(1), true));

async function start() {
  if (!token) return logOut();
  const answer = await api("GET", "/users/info").catch(() => undefined);
  if (answer?.status === 200) {
    const { Email, Teams } = answer.json();
    signedIn(Email, (Teams ?? []).includes("admin"));
  }
}

setInterval(() => {
  tick++;
  refresh();
}, POLL_MS);
start();
