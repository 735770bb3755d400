// An instance's custom actions (platform 1.31): the operations of its service's manifest, each a
// form that calls it through the platform's proxy, /1.20/services/<s>/resources/<i>/<path>, as
// `tsuru` users do. The platform decides who may call what; the panel shows its answer as text.

import { h } from "./dom.js";

const WILDCARD = /^\{([A-Za-z_][A-Za-z0-9_]*)(\.\.\.)?\}$/;
/** The methods whose calls carry a body. */
const WITH_BODY = ["POST", "PUT", "PATCH"];

/**
 * A manifest path (a Go ServeMux pattern below the instance) as parts: literals, `{name}` (one
 * segment), `{name...}` or a trailing `/` (everything below).
 */
function patternParts(path) {
  const parts = (path.startsWith("/") ? path : `/${path}`).split("/").slice(1);
  return parts.map((part, index) => {
    if (part === "" && index === parts.length - 1) return { param: "", rest: true };
    const wildcard = WILDCARD.exec(part);
    return wildcard ? { param: wildcard[1], rest: Boolean(wildcard[2]) } : { literal: part };
  });
}

/** A value typed for a parameter, as path segments; `.` and `..` would make the browser climb out of the instance. */
function segmentsOf(part, value) {
  const segments = part.rest ? value.split("/").filter((segment) => segment !== "") : [value];
  if (!part.rest && value === "") throw new Error(`Give a value for {${part.param}}.`);
  if (segments.some((segment) => segment === "." || segment === "..")) throw new Error(`"${value}" has a "." or ".." segment: give the path itself.`);
  return segments.map(encodeURIComponent);
}

/** The call's body: JSON text checked here, so a typo is said before anything is sent. */
function bodyOf(text) {
  if (text.trim() === "") return {};
  try {
    return { json: JSON.parse(text) };
  } catch (error) {
    throw new Error(`The body is not JSON: ${error.message}`);
  }
}

/** The answer as the platform gave it: its status, then its body (JSON indented), always as text. */
function answerText(answer) {
  let body = answer.text;
  try {
    body = JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    // Not JSON: shown as it is.
  }
  return `HTTP ${answer.status}\n\n${body.trim() === "" ? "(empty answer)" : body}`;
}

/**
 * Which teams hold a grant covering the action (`service-action.<s>.<granted>` covers the action
 * and every action below it), from GET /1.31/services/<s>/actions, which only the service's owners read.
 */
function holdersOf(service, action, grants) {
  const prefix = `service-action.${service}.`;
  const teams = Object.entries(grants)
    .map(([permission, holders]) => ({ granted: permission.slice(prefix.length), holders }))
    .filter(({ granted }) => action === granted || action.startsWith(`${granted}.`))
    .flatMap(({ holders }) => holders);
  return [...new Set(teams)];
}

/** Who holds the action, for the service's owners (admins hold every action besides). */
function grantNote(service, action, grants) {
  if (!grants) return undefined;
  const holders = holdersOf(service, action, grants);
  return h("p", { class: "grants" }, holders.length > 0 ? `Granted to: ${holders.join(", ")}.` : "Granted to no team: admins only.");
}

function operationForm(target, operation, index, { api, say, grants }) {
  const parts = patternParts(operation.path);
  const id = (name) => `action-${index}-${name}`;
  const params = parts.flatMap((part, at) => {
    if (part.literal !== undefined) return [];
    const label = part.param === "" ? "path below" : part.rest ? `{${part.param}...}` : `{${part.param}}`;
    return [h("label", { for: id(`part-${at}`) }, label), " ", h("input", { id: id(`part-${at}`), "data-part": String(at), required: !part.rest }), " "];
  });
  const body = WITH_BODY.includes(operation.method)
    ? h("p", {}, h("label", { for: id("body") }, "Body (JSON, optional)"), h("br"), h("textarea", { id: id("body"), rows: "2", cols: "60", spellcheck: "false" }))
    : undefined;
  const output = h("pre", { class: "answer", "aria-live": "polite", hidden: true });

  async function call(event) {
    event.preventDefault();
    const form = event.target;
    const label = `${operation.action} on ${target.instance}`;
    try {
      const below = parts.flatMap((part, at) => (part.literal !== undefined ? [encodeURIComponent(part.literal)] : segmentsOf(part, form.querySelector(`[data-part="${at}"]`).value)));
      const options = body ? bodyOf(form.querySelector("textarea").value) : {};
      const path = `/1.20/services/${encodeURIComponent(target.service)}/resources/${encodeURIComponent(target.instance)}/${below.join("/")}`;
      output.textContent = `${operation.method} ${path}…`;
      output.hidden = false;
      const answer = await api(operation.method, path, options);
      output.textContent = answerText(answer);
      output.classList.toggle("failed", answer.status >= 400);
      say(`${label}: HTTP ${answer.status}.`, answer.status >= 400);
    } catch (error) {
      say(`${label} not sent: ${error.message}`, true);
    }
  }

  return h("form", { class: "action", "data-action": operation.action, onsubmit: call },
    h("fieldset", {},
      h("legend", {}, operation.action),
      h("p", {}, h("span", { class: "method" }, operation.method), " ", h("code", {}, operation.path)),
      grantNote(target.service, operation.action, grants),
      params.length > 0 ? h("p", {}, params) : undefined,
      body,
      h("p", {}, h("button", { type: "submit" }, "Call")),
      output,
    ),
  );
}

function noManifest(service) {
  const put = `curl -X PUT -H "Authorization: bearer $TOKEN" -H 'Content-Type: application/json' --data @actions.json ${location.origin}/1.31/services/${service}/manifest`;
  return [
    h("p", {}, `The service ${service} has no actions manifest stored, so its actions are not known here (calls through the proxy still work). ` +
      "Store one from the provider's project: write it with provider-kit, then PUT it as an owner of the service:"),
    h("pre", {}, `npx provider-kit manifest --actions ./actions.ts > actions.json\n${put}`),
  ];
}

/**
 * The panel's content for one instance: its service's actions, each callable, or why there are none.
 * `owner`: the user is in a team owning the service, the only ones who may read its grants.
 */
export async function actionsPanel(target, { api, say, owner }) {
  const service = encodeURIComponent(target.service);
  const noGrants = { status: 403 };
  const [manifest, grants] = await Promise.all([api("GET", `/1.31/services/${service}/manifest`), owner ? api("GET", `/1.31/services/${service}/actions`) : noGrants]);
  if (manifest.status !== 200) return [h("p", { class: "failed" }, `The actions could not be read: HTTP ${manifest.status} ${manifest.text.trim()}`)];
  const stored = manifest.json();
  if (stored === null) return noManifest(target.service);
  if (stored.operations.length === 0) return [h("p", {}, `The manifest of the service ${target.service} lists no actions.`)];
  const tools = { api, say, grants: grants.status === 200 ? grants.json() : undefined };
  return [
    stored.enabled ? undefined : h("p", {}, "The manifest is disabled: the platform checks no action permission, and the instance's teams may call everything."),
    ...stored.operations.map((operation, index) => operationForm(target, operation, index, tools)),
  ].filter(Boolean);
}
