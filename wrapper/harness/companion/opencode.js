// padrun's companion for opencode and kilo, shipped inside padrun and loaded
// as a plugin named in the inline config ($OPENCODE_CONFIG_CONTENT,
// $KILO_CONFIG_CONTENT).
//
// opencode keeps every session as rows of one database, and picks or makes
// the session a turn goes to inside its own process (-c, a new session, the
// TUI's session list, a server's requests). Before the first message of a
// turn is stored, this asks the padrun of this session, through its control
// socket ($PADRUN_CONTROL, named by $PAD_SESSION_PID), to claim the session
// (its guard in $PADRUN_SESSIONS). Held by another session, or padrun
// unreachable: the hook throws, which ends the turn before opencode stores
// the message or calls a model (1.18.33 SessionPrompt.createUserMessage
// triggers chat.message before updateMessage). Otherwise it changes nothing.
//
// kilo's prompt removes a session's unfinished reply (7.7.7 and 7.7.9
// KiloSessionPrompt.recoverDanglingAssistant) before chat.message: for
// `kilo run -c` ($PADRUN_CONTINUE), the session run will pick is claimed
// at load, which kilo's bootstrap awaits before run lists its sessions.

// The sessions this process holds already: padrun keeps them to its end.
const claimed = new Set();

// refusal is what the turn is refused with.
function refusal(r, id) {
  if (r.result === "refused" && r.lines && r.lines.length) return r.lines.join("\n");
  return [
    "padrun: turn refused: cannot ask padrun to guard session " + id + ": " + (r.error || r.result),
    "padrun: hint: padrun fails closed; restart under padrun, or run padrun --no-companion to leave such sessions unguarded",
  ].join("\n");
}

// continuePicks are the sessions kilo's `run -c` may pick, read from its
// database read-only: run takes the first root session of session.list()
// (7.7.7 and 7.7.9 Cli.run: `(await sdk.session.list()).data?.find((s) =>
// !s.parentID)`). Its client names the directory in the query, so
// Session.list's rows are `where (project_id = P or directory = D) and
// directory = D order by time_updated desc limit 100` (SessionStore
// filters: P the instance's project, D its directory resolved as
// Filesystem.resolve does, through symlinks). Rows tied with the pick are
// all claimed: SQLite orders ties as it likes.
async function continuePicks(input) {
  const dir = process.env.PADRUN_SESSIONS || "";
  const base = path.basename(dir);
  const project = input && input.project;
  if (!project || !project.id || !input.directory) throw new Error("kilo named no project or directory for its sessions");
  if (!base.startsWith(".") || !base.endsWith(".padrun")) throw new Error("no guards' folder (PADRUN_SESSIONS)");
  const db = path.join(path.dirname(dir), base.slice(1, -".padrun".length));
  const fs = await import("node:fs");
  if (!fs.existsSync(db)) return []; // no database yet: run makes a new session
  let where = path.resolve(input.directory);
  try {
    where = fs.realpathSync(where);
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
  }
  const { Database } = await import("bun:sqlite");
  const conn = new Database(db, { readonly: true });
  try {
    const rows = conn
      .query(
        "select id, parent_id, time_updated from session where (project_id = ?1 or directory = ?2) and directory = ?2" +
          " order by time_updated desc limit 100",
      )
      .all(project.id, where);
    const pick = rows.find((r) => !r.parent_id);
    return pick ? rows.filter((r) => !r.parent_id && r.time_updated === pick.time_updated).map((r) => r.id) : [];
  } finally {
    conn.close();
  }
}

// claimContinue holds -c's pick before kilo can touch it. A refusal makes
// padrun end the run; kilo only logs a plugin that throws at load and goes
// on, so a pick that cannot be read or claimed ends the process here.
async function claimContinue(input) {
  let ids;
  try {
    ids = await continuePicks(input);
  } catch (e) {
    process.stderr.write(
      "padrun: refused: cannot read the session kilo run -c picks: " + e.message + "\n" +
        "padrun: hint: name the session with kilo run -s ID, or run padrun --no-companion to leave it unguarded\n",
    );
    process.exit(75);
  }
  for (const id of ids) {
    const r = await ask({ op: "claim", file: path.join(process.env.PADRUN_SESSIONS, id), sessionId: id, stop: true, wait: true });
    if (r.result === "claimed") {
      claimed.add(id);
      continue;
    }
    // Refused: padrun, which says why, is ending the run already.
    if (r.result !== "refused") process.stderr.write(refusal(r, id) + "\n");
    process.exit(75);
  }
}

// toast shows a refused turn's reason in the TUI, or in the TUIs attached
// to a server: the TUI itself says only that the prompt failed ("Unexpected
// server error. Check server logs for details."), in the one toast it
// shows at a time, once the refused request has returned. So the reason is
// shown at once and again a second later, over the TUI's own. The client is
// opencode's own, of either generation of its SDK (flat arguments, or a
// body). Best effort: the turn is refused whether or not it shows.
function toast(client, text) {
  const t = { title: "padrun", message: text, variant: "error", duration: 15000 };
  const show = () => Promise.resolve(client.tui.showToast({ ...t, body: t })).catch(() => {});
  show();
  const again = setTimeout(show, 1000);
  if (again.unref) again.unref();
}

export const PadrunCompanion = async (plugin) => {
  // Greet padrun as soon as the plugin loads: a companion padrun asked for
  // that never says hello makes it warn.
  ask({ op: "hello" }, true);
  if (process.env.PADRUN_CONTINUE === "1") await claimContinue(plugin);
  return {
    "chat.message": async (input) => {
      const id = input && input.sessionID;
      if (!id || claimed.has(id)) return;
      const dir = process.env.PADRUN_SESSIONS;
      let r = { result: "error", error: "padrun named no folder for its sessions (PADRUN_SESSIONS)" };
      // run cannot go on without its session: padrun ends it at once.
      const stop = process.env.PADRUN_STOP === "1";
      if (dir) {
        // The turn waits for the answer: under --wait, padrun queues it.
        r = await ask({ op: "claim", file: path.join(dir, id), sessionId: id, stop, wait: true });
      }
      if (r.result === "claimed") {
        claimed.add(id);
        return;
      }
      const text = refusal(r, id);
      if (!stop && plugin && plugin.client) toast(plugin.client, text);
      throw new Error(text);
    },
  };
};
