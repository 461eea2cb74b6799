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

export const PadrunCompanion = async () => {
  // Greet padrun as soon as the plugin loads: a companion padrun asked for
  // that never says hello makes it warn.
  ask({ op: "hello" }, true);
  return {
    "chat.message": async (input) => {
      const id = input && input.sessionID;
      if (!id || claimed.has(id)) return;
      const dir = process.env.PADRUN_SESSIONS;
      let r = { result: "error", error: "padrun named no folder for its sessions (PADRUN_SESSIONS)" };
      if (dir) {
        // run cannot go on without its session: padrun ends it at once.
        const stop = process.env.PADRUN_STOP === "1";
        // The turn waits for the answer: under --wait, padrun queues it.
        r = await ask({ op: "claim", file: path.join(dir, id), sessionId: id, stop, wait: true });
      }
      if (r.result === "claimed") {
        claimed.add(id);
        return;
      }
      throw new Error(refusal(r, id));
    },
  };
};
