// The platform's calls to providers as the console shows them: the timeline (every call, grouped
// by the API request that sent it) and an instance's story (what users did to it, each with the
// calls it caused). Everything from a call reaches the page as text.

import { h } from "./dom.js";

/** Calls of one API request together: the ones it caused, then the undo calls under them. */
export function groups(calls) {
  const result = [];
  for (const call of calls) {
    const last = result[result.length - 1];
    // Calls with no operation (the seed, at start-up) group together too.
    if (last && last.operation?.id === call.operation?.id) last.calls.push(call);
    else result.push({ operation: call.operation, calls: [call] });
  }
  return result;
}

export const failedCall = (call) => call.status === undefined || call.status >= 400;

/** The address of one call's page. */
export const callLink = (call) => `#/calls/${call.id}`;

function headerLines(headers) {
  return Object.entries(headers).map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(", ") : value}`).join("\n");
}

const outcomeOf = (call) => (call.status === undefined ? `failed: ${call.error}` : String(call.status));

/** A call's request, answer and curl line (the platform redacted the provider's credentials). */
export function callBody(call, say) {
  const copy = h("button", { type: "button", onclick: (event) => {
    navigator.clipboard?.writeText(call.curl).then(() => say("curl line copied."), () => say("Select the curl line to copy it.", true));
    event.preventDefault();
  } }, "Copy curl");
  return [
    h("h4", {}, "Request"),
    h("pre", {}, `${call.method} ${call.url}${call.path}\n${headerLines(call.requestHeaders)}\n\n${call.requestBody}`),
    h("h4", {}, "Answer"),
    h("pre", {}, call.status === undefined ? call.error : `${call.status}\n\n${call.answer ?? ""}`),
    h("h4", {}, "Reproduce with curl"),
    h("pre", { class: "curl" }, call.curl),
    h("p", {}, copy, " ", h("a", { href: callLink(call) }, "Link to this call")),
  ];
}

export function callItem(call, say) {
  return h("li", { class: `call${failedCall(call) ? " failed" : ""}${call.undo ? " undo" : ""}`, "data-call": String(call.id) },
    h("details", {},
      h("summary", {},
        h("time", { datetime: call.at }, call.at.slice(11, 23)), " ",
        call.undo ? h("strong", {}, "undo ") : undefined,
        // Its failure did not stop the operation: the user forced it.
        call.forced ? h("strong", {}, "forced ") : undefined,
        h("span", { class: "method" }, call.method), " ", h("code", {}, call.path), " → ",
        h("span", { class: "outcome" }, outcomeOf(call)), ` (${call.durationMs} ms) `,
        h("span", { class: "where" }, [call.service, call.instance, call.app].filter(Boolean).join(" / ")),
      ),
      ...callBody(call, say),
    ),
  );
}

/** The timeline's entries: operations newest first; the steps of one in the order sent, then its undo calls. */
export function timelineItems(calls, say) {
  return groups(calls).reverse().map((group) => {
    const caused = group.calls.filter((call) => !call.undo);
    const undone = group.calls.filter((call) => call.undo);
    const items = caused.map((call) => callItem(call, say));
    if (undone.length > 0) {
      items.push(h("li", { class: "undo-group" }, h("p", {}, `Undone by the platform after a failure (${undone.length} call${undone.length > 1 ? "s" : ""}):`), h("ol", {}, undone.map((call) => callItem(call, say)))));
    }
    const label = group.operation ? group.operation.label : "at start-up (the seed)";
    return h("li", { class: "operation" }, h("p", { class: "label" }, h("code", {}, label)), h("ol", {}, items));
  });
}

// An instance's story ------------------------------------------------------------------------

const VERSION = "(?:/1\\.\\d+)?";
const DOINGS = [
  [new RegExp(`^POST ${VERSION}/services(?:/[^/]+)?/instances$`), () => "Created"],
  [new RegExp(`^PUT ${VERSION}/services/[^/]+/instances/[^/]+$`), () => "Updated"],
  [new RegExp(`^PUT ${VERSION}/services/instances/[^/]+/([^/]+)$`), (app) => `Bound to the app ${app}`],
  [new RegExp(`^PUT ${VERSION}/services/[^/]+/instances/[^/]+/apps/([^/]+)$`), (app) => `Bound to the app ${app}`],
  [new RegExp(`^DELETE ${VERSION}/services/instances/[^/]+/([^/]+)$`), (app) => `Unbound from the app ${app}`],
  [new RegExp(`^DELETE ${VERSION}/services/[^/]+/instances/[^/]+/apps/([^/]+)$`), (app) => `Unbound from the app ${app}`],
  [new RegExp(`^DELETE ${VERSION}/services(?:/[^/]+)?/instances/[^/]+$`), () => "Removed"],
  [new RegExp(`^(?:GET|POST|PUT|PATCH|DELETE) ${VERSION}/services/[^/]+/(?:resources|proxy)/[^/]+(/.*)?$`), (path) => `Action ${path ?? "/"}`],
  [/^PUT .*\/units$|^DELETE .*\/units$/, () => "Units of a bound app changed"],
  [/^POST .*\/env$/, () => "Environment of a bound app changed"],
];

/** What the user did, in words, from the API request's label; undefined for a read (status, info, health, plans). */
function doing(label) {
  for (const [pattern, words] of DOINGS) {
    const match = pattern.exec(label);
    if (match) return words(...match.slice(1).map((part) => (part === undefined ? undefined : decodeURIComponent(part))));
  }
  return label.startsWith("GET ") ? undefined : label;
}

/** A bar as long as the call took, against the slowest of its step (set through CSSOM: the policy allows no style attribute). */
function bar(share) {
  const element = h("span", { class: "bar", "aria-hidden": "true" });
  element.style.width = `${Math.max(2, Math.round(share * 100))}%`;
  return element;
}

/** The instance's story: per thing done, newest first, the calls to the provider as a sequence, each one click from its request and answer. */
export function storyItems(calls, say) {
  const done = groups(calls)
    .map((group) => ({ ...group, words: group.operation ? doing(group.operation.label) : "Created at start-up (the seed)" }))
    .filter((group) => group.words !== undefined)
    .reverse();
  return done.map((group) => {
    const slowest = Math.max(1, ...group.calls.map((call) => call.durationMs));
    const failed = group.calls.some((call) => failedCall(call) && !call.forced);
    const first = group.calls[0];
    return h("li", { class: `step${failed ? " failed" : ""}` },
      h("p", { class: "doing" },
        h("strong", {}, group.words), " ",
        h("time", { datetime: first.at }, first.at.replace("T", " ").slice(0, 19)), " ",
        h("span", { class: "badge" + (failed ? " bad" : " good") }, failed ? "failed" : "done"),
        group.operation ? h("code", { class: "where" }, group.operation.label) : undefined,
      ),
      h("ol", { class: "sequence", "aria-label": `Calls for: ${group.words}` },
        group.calls.map((call) =>
          h("li", { class: `exchange${failedCall(call) ? " failed" : ""}${call.undo ? " undo" : ""}`, "data-call": String(call.id) },
            h("details", {},
              h("summary", {},
                h("span", { class: "lane" }, "platform → provider"), " ",
                call.undo ? h("strong", {}, "undo ") : undefined,
                h("span", { class: "method" }, call.method), " ", h("code", {}, call.path), " ",
                h("span", { class: "outcome" }, `← ${outcomeOf(call)}`), " ",
                h("span", { class: "timing" }, bar(call.durationMs / slowest), ` ${call.durationMs} ms`),
              ),
              ...callBody(call, say),
            ),
          ),
        ),
      ),
    );
  });
}
