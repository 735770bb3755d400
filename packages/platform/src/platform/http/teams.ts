/** `/teams`: teams and their members. */
import { z } from "zod";
import { addMember, createTeam, getTeam, listTeams, removeMember, removeTeam } from "../domain/teams.js";
import { body, nameParam, sendEmpty, sendJson, type Route } from "./handler.js";

const NEW_TEAM = z.object({ name: z.string() });

export const teamList: Route = async ({ res, context, actor }) => {
  const teams = await listTeams(context, actor);
  sendJson(res, 200, teams.map((team) => ({ name: team.name })));
};

export const teamShow: Route = async ({ req, res, context, actor }) => {
  const team = await getTeam(context, actor, nameParam(req, "team", "team"));
  sendJson(res, 200, { name: team.name, users: team.users });
};

/** `created`: the spec's 200, or 201 on today's client's versioned route, as `createTeam` answers. */
export const teamCreate = (created: 200 | 201): Route => async ({ req, res, context, actor }) => {
  await createTeam(context, actor, body(req, NEW_TEAM).name);
  sendEmpty(res, created);
};

export const teamRemove: Route = async ({ req, res, context, actor }) => {
  await removeTeam(context, actor, nameParam(req, "team", "team"));
  sendEmpty(res, 200);
};

export const memberAdd: Route = async ({ req, res, context, actor }) => {
  await addMember(context, actor, nameParam(req, "team", "team"), nameParam(req, "user", "email"));
  sendEmpty(res, 200);
};

export const memberRemove: Route = async ({ req, res, context, actor }) => {
  await removeMember(context, actor, nameParam(req, "team", "team"), nameParam(req, "user", "email"));
  sendEmpty(res, 200);
};
