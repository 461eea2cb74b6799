// padrun's companion for pi, shipped inside padrun and loaded with -e.
//
// pi switches sessions inside one run (/resume, /new, /fork, /clone, the -r
// picker, the RPC commands switch_session, new_session, fork and clone).
// Before pi writes to a session file, this asks the padrun of this session,
// through its control socket ($PADRUN_CONTROL, named by $PAD_SESSION_PID),
// to claim the file. Held by another session: the switch is cancelled and
// padrun's refusal is shown. padrun unreachable: the switch is cancelled too.
// Otherwise it changes nothing of pi's prompts, output or exit status.

const REFUSED = 75; // padrun's exit status for a refusal

// pi 1.x writes -r --name's name into the picked file before it loads
// extensions, before padrun could claim it: padrun passes the name here
// instead, and it is set once the session is held. Not for pi's children.
let sessionName = process.env.PADRUN_PI_NAME;
delete process.env.PADRUN_PI_NAME;

// lines is what to say about a claim that was not granted.
function lines(r, what) {
  if (r.result === "refused" && r.lines && r.lines.length) return r.lines;
  return [
    "padrun: " + what + ": cannot ask padrun to guard the session file: " + (r.error || r.result),
    "padrun: hint: padrun fails closed; restart pi under padrun, or run padrun --no-companion to leave switches unguarded",
  ];
}

// tell shows a refusal where the person sees it: inside the TUI, and on
// stderr and as an RPC notification otherwise.
function tell(ctx, text) {
  if (ctx.hasUI) {
    try {
      ctx.ui.notify(text, "error");
    } catch {}
  }
  if (!process.stdout.isTTY) process.stderr.write(text + "\n");
}

// stop ends pi before it writes to a session that padrun could not claim
// after pi opened it (the -r picker, a session named on the command line).
// sealed (omp) ends it at once: omp 18.1's ctx.shutdown() waits for the
// next prompt to be answered, and omp restores the terminal on exit itself.
function stop(ctx, text, sealed) {
  process.once("exit", () => {
    if (process.stdout.isTTY) process.stderr.write(text + "\n");
    process.exitCode = REFUSED;
  });
  if (process.stdout.isTTY && ctx.hasUI && !sealed) {
    tell(ctx, text);
    ctx.shutdown();
    return;
  }
  tell(ctx, text);
  process.exit(REFUSED);
}

export default function padrunCompanion(pi) {
  // Greet padrun as soon as pi loads the companion: a companion padrun asked
  // for that never says hello makes it warn and fall back to its folder watch.
  ask({ op: "hello" }, true);

  pi.on("session_before_switch", async (event, ctx) => {
    try {
      if (event.reason === "resume" && event.targetSessionFile) {
        const r = await ask({ op: "claim", file: path.resolve(event.targetSessionFile) });
        if (r.result === "claimed") return undefined;
        tell(ctx, lines(r, "switch cancelled").join("\n"));
        return { cancel: true };
      }
      // A new session's file is claimed at session_start, before pi's first
      // write; padrun must be there to do it.
      const r = await ask({ op: "hello" });
      if (r.result === "ok") return undefined;
      tell(ctx, lines(r, "new session cancelled").join("\n"));
      return { cancel: true };
    } catch (e) {
      tell(ctx, lines({ result: "error", error: String(e) }, "switch cancelled").join("\n"));
      return { cancel: true };
    }
  });

  pi.on("session_before_fork", async (_event, ctx) => {
    try {
      const r = await ask({ op: "hello" });
      if (r.result === "ok") return undefined;
      tell(ctx, lines(r, "fork cancelled").join("\n"));
    } catch (e) {
      tell(ctx, lines({ result: "error", error: String(e) }, "fork cancelled").join("\n"));
    }
    return { cancel: true };
  });

  pi.on("session_start", async (event, ctx) => {
    const sm = ctx.sessionManager;
    const file = sm.getSessionFile && sm.getSessionFile();
    if (file) {
      let r;
      try {
        r = await ask({ op: "claim", file: path.resolve(file), sessionId: sm.getSessionId() });
      } catch (e) {
        r = { result: "error", error: String(e) };
      }
      if (r.result !== "claimed") {
        // omp appends a session_exit entry to its session as it ends, on
        // shutdown and on process.exit alike: its seal() drops every later
        // write. pi has none and writes nothing as it ends.
        const sealed = typeof sm.seal === "function";
        if (sealed) sm.seal();
        stop(ctx, lines(r, "pi stopped").join("\n"), sealed);
        return;
      }
      if (sessionName) {
        pi.setSessionName(sessionName);
      }
    }
    sessionName = undefined; // the session pi starts with only
    const prev = event.previousSessionFile;
    if (prev && (!file || path.resolve(prev) !== path.resolve(file))) {
      await ask({ op: "release", file: path.resolve(prev) }); // Best effort: padrun releases it at exit anyway.
    }
  });
}
