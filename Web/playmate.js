// Playmate — sports sessions with friends: search and map, a session's detail, creating sessions,
// invitations, friends, my calendar, the preferences quiz, suggestions and statistics.
// The screens live in playmate-*.js; this module merges their routes for app.js.
import { sessionsScreen } from "./playmate-search.js";
import { sessionScreen, newSessionScreen } from "./playmate-session.js";
import { friendsScreen, invitationsScreen } from "./playmate-social.js";
import { calendarScreen, quizScreen, recsScreen, statsScreen } from "./playmate-me.js";

export const routes = {
  "sessions": sessionsScreen,
  "session": sessionScreen,
  "newsession": newSessionScreen,
  "invitations": invitationsScreen,
  "friends": friendsScreen,
  "calendar": calendarScreen,
  "quiz": quizScreen,
  "recs": recsScreen,
  "stats": statsScreen,
};
