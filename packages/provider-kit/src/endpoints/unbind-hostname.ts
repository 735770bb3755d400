/** Variant B: DELETE /resources/:instance/hostname/:host unbinds the app known by that host → 200. */
import { sendEmpty } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { unbindHostnameSchema } from "../schemas.js";

export const unbindHostname = endpoint({
  schema: unbindHostnameSchema,
  run: (lifecycle, request, context) => lifecycle.unbindApp(request, context),
  answer: (res) => sendEmpty(res, 200),
});
