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

// The companion's own connections to the database, which the rows guard
// leaves alone.
const ownConns = new WeakSet();

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
  ownConns.add(conn);
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

// keepPrompt puts a refused turn's typed text back into the TUI's prompt,
// which the TUI empties as it sends the turn, before any answer
// (1.17.19 and 1.18.33 Prompt.submit: session.prompt is not awaited, the
// input is set to "" at once). Its tui.prompt.append event inserts text at
// the cursor: the text comes back, the file and agent mentions as plain
// text (their parts are not the TUI's to take back). Best effort.
function keepPrompt(client, output) {
  const parts = (output && output.parts) || [];
  const text = parts.filter((p) => p && p.type === "text" && !p.synthetic && typeof p.text === "string").map((p) => p.text).join("\n");
  if (!text || !client.tui || !client.tui.appendPrompt) return;
  const t = { text };
  Promise.resolve(client.tui.appendPrompt({ ...t, body: t })).catch(() => {});
}

// The rows guard. Every turn (SessionPrompt.prompt) may delete rows of its
// session before chat.message, the first plugin hook: opencode's and kilo's
// revert cleanup (a pending /undo: SessionRevert.cleanup removes the
// messages and parts after the revert point, updates a message and clears
// session.revert), kilo's recoverDanglingAssistant,
// recoverProviderFinishError and recoverFailedAssistant (removeMessage).
// This process owns the harness's SQLite connection (bun:sqlite, through
// drizzle, whose every query is Database.prototype.prepare, or query for
// the Effect client): on its first use, TEMPORARY triggers (never written
// to the database file) are put on it that abort every insert, update or
// delete of rows of session, message and part whose session another
// padrun holds, and the set of such sessions (temp.padrun_held) is read
// again from padrun's guards' folder, synchronously, before every such
// statement runs. The aborted write rolls back its transaction (SyncEvent
// runs the projector and the event's insert in one), so the turn fails
// with nothing changed, before it reaches chat.message.

const guardedTables = [
  ["session", "id", ["update", "delete"]],
  ["message", "session_id", ["insert", "update", "delete"]],
  ["part", "session_id", ["insert", "update", "delete"]],
];
const triggers = guardedTables.reduce((n, t) => n + t[2].length, 0);
const rowsRefusal = "padrun: refused: this session is in use by another padrun session: nothing of it was changed";

// writesRows says whether sql may change rows the triggers guard.
function writesRows(sql) {
  return typeof sql === "string" && /^\s*(with\b[\s\S]*?\b)?(insert|replace|update|delete)\b/i.test(sql) &&
    /\b(session|message|part)\b/i.test(sql);
}

// heldElsewhere lists the sessions of the guards' folder another padrun
// holds: a marker (<id>.live.json, or .<id>.padrun.json) of another
// padrun, whose holder is not a process of this machine that has ended.
// Read as the write is about to run: nothing is asked of padrun, and a
// claim published before it is seen. The markers are read again whenever
// the folder changed (padrun links or renames a marker into place, and
// removes it): a folder last changed less than a second before it was read
// is read again, as its mtime may not show a change made within the same
// tick of the kernel's clock.
function markerReader(fs, dir, me) {
  let cache = null; // { mtime, at, holders: [{id, m}] }
  const read = () => {
    let names;
    try {
      names = fs.readdirSync(dir);
    } catch (e) {
      if (e.code === "ENOENT") return [];
      throw e;
    }
    const holders = [];
    for (const n of names) {
      const id = n.endsWith(".live.json") ? n.slice(0, -".live.json".length)
        : n.startsWith(".") && n.endsWith(".padrun.json") ? n.slice(1, -".padrun.json".length) : "";
      if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(id)) continue;
      let m;
      try {
        m = JSON.parse(fs.readFileSync(path.join(dir, n), "utf8"));
      } catch (e) {
        if (e.code === "ENOENT") continue; // released meanwhile
        m = {}; // not one padrun reads: held
      }
      holders.push({ id, m });
    }
    return holders;
  };
  return () => {
    let mtime = -1n;
    try {
      mtime = fs.statSync(dir, { bigint: true }).mtimeNs;
    } catch (e) {
      if (e.code !== "ENOENT") throw e;
    }
    const at = BigInt(Date.now()) * 1000000n;
    if (!cache || cache.mtime !== mtime || cache.at - mtime < 1000000000n) cache = { mtime, at, holders: read() };
    const ids = [];
    for (const { id, m } of cache.holders) {
      if (claimed.has(id) || m.pid === me.pid) continue;
      if (m.pid > 0 && m.bootId === me.bootId && m.hostname === me.hostname && !alive(m.pid)) continue;
      ids.push(id);
    }
    return [...new Set(ids)].sort();
  };
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code !== "ESRCH";
  }
}

// guardRows patches bun:sqlite so that the harness's own connection to db
// carries the triggers. Connections the companion opens itself are left
// alone (own).
async function guardRows(plugin, own) {
  const dir = process.env.PADRUN_SESSIONS || "";
  const base = path.basename(dir);
  if (!base.startsWith(".") || !base.endsWith(".padrun")) return;
  const db = path.resolve(path.dirname(dir), base.slice(1, -".padrun".length));
  const fs = await import("node:fs");
  const os = await import("node:os");
  const { Database } = await import("bun:sqlite");
  let bootId = "";
  try {
    bootId = fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {}
  const me = { pid: Number(process.env.PAD_SESSION_PID), bootId, hostname: os.hostname() };
  const heldElsewhere = markerReader(fs, dir, me);
  const orig = { prepare: Database.prototype.prepare, query: Database.prototype.query, run: Database.prototype.run };
  const conns = new WeakMap(); // Database -> its guard's state, or null when not the harness's
  const wrapped = new WeakSet();
  const state = (conn) => {
    let st = conns.get(conn);
    if (st !== undefined) return st;
    st = null;
    if (!own.has(conn) && conn.filename && path.resolve(conn.filename) === db) st = { held: null, sure: false };
    conns.set(conn, st);
    return st;
  };
  // refresh puts the triggers on conn (again, if a rolled-back transaction
  // took them) and makes temp.padrun_held the sessions held elsewhere now.
  const refresh = (conn) => {
    const run = (sql, ...args) => orig.run.call(conn, sql, ...args);
    const one = (sql) => orig.prepare.call(conn, sql).get();
    const ids = heldElsewhere();
    const want = ids.join(",");
    const st = conns.get(conn);
    // What was written outside a transaction stays: a rollback takes only
    // what was written within it.
    if (st.sure && st.held === want) return;
    const have = one("select count(*) as n from temp.sqlite_master where name = 'padrun_held' or name like 'padrun_guard_%'");
    if (have.n === triggers + 1) {
      const now = one("select group_concat(id, ',') as ids from (select id from temp.padrun_held order by id)");
      if ((now.ids || "") === want) {
        st.held = want;
        st.sure = !conn.inTransaction;
        return;
      }
    }
    run("create temp table if not exists padrun_held (id text primary key)");
    for (const [table, col, ops] of guardedTables) {
      for (const op of ops) {
        const row = op === "insert" ? "new" : "old";
        const cond = op === "update" ? `old.${col} in (select id from temp.padrun_held) or new.${col} in (select id from temp.padrun_held)`
          : `${row}.${col} in (select id from temp.padrun_held)`;
        run(`create temp trigger if not exists padrun_guard_${table}_${op} before ${op} on main.${table} when ${cond}` +
          ` begin select raise(abort, '${rowsRefusal}'); end`);
      }
    }
    run("delete from temp.padrun_held");
    for (const id of ids) run("insert into temp.padrun_held (id) values (?)", id);
    st.held = want;
    st.sure = !conn.inTransaction;
  };
  const before = (conn) => {
    const st = state(conn);
    if (!st) return;
    try {
      refresh(conn);
    } catch (e) {
      // No table yet (a new database before its migrations): nothing to keep.
      if (!/no such table: main\./.test(String(e && e.message))) throw e;
    }
  };
  const told = (e) => {
    if (e && String(e.message).includes(rowsRefusal) && process.env.PADRUN_STOP !== "1" && plugin && plugin.client) {
      toast(plugin.client, rowsRefusal);
    }
    return e;
  };
  const wrap = (conn, stmt, sql) => {
    if (!stmt || wrapped.has(stmt) || !state(conn) || !writesRows(sql)) return stmt;
    wrapped.add(stmt);
    for (const m of ["run", "all", "get", "values", "iterate", "raw"]) {
      const f = stmt[m];
      if (typeof f !== "function") continue;
      stmt[m] = function (...args) {
        before(conn);
        try {
          return f.apply(this, args);
        } catch (e) {
          throw told(e);
        }
      };
    }
    return stmt;
  };
  Database.prototype.prepare = function (sql, ...rest) {
    return wrap(this, orig.prepare.call(this, sql, ...rest), sql);
  };
  Database.prototype.query = function (sql, ...rest) {
    return wrap(this, orig.query.call(this, sql, ...rest), sql);
  };
  Database.prototype.run = function (sql, ...rest) {
    if (writesRows(sql)) before(this);
    try {
      return orig.run.call(this, sql, ...rest);
    } catch (e) {
      throw told(e);
    }
  };
  Database.prototype.exec = Database.prototype.run;
}

export const PadrunCompanion = async (plugin) => {
  // Greet padrun as soon as the plugin loads: a companion padrun asked for
  // that never says hello makes it warn.
  ask({ op: "hello" }, true);
  await guardRows(plugin, ownConns);
  if (process.env.PADRUN_CONTINUE === "1") await claimContinue(plugin);
  return {
    "chat.message": async (input, output) => {
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
      if (!stop && plugin && plugin.client) {
        toast(plugin.client, r.result === "refused" && r.toast && r.toast.length ? r.toast.join("\n") : text);
        keepPrompt(plugin.client, output);
      }
      throw new Error(text);
    },
  };
};
