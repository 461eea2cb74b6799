// padrun's control socket, as a companion inside the harness reaches it:
// the first part of every companion script padrun ships (SPEC 4.5).
import * as net from "node:net";
import * as path from "node:path";

// ask sends one request to padrun and resolves with its answer. A request
// in the background keeps no process of the harness alive.
function ask(req, background) {
  return new Promise((resolve) => {
    const sock = process.env.PADRUN_CONTROL;
    const pid = process.env.PAD_SESSION_PID;
    if (!sock || !pid || path.basename(sock) !== pid + ".sock") {
      resolve({ result: "error", error: "no control socket of this padrun session (PADRUN_CONTROL, PAD_SESSION_PID)" });
      return;
    }
    let buf = "";
    let done = false;
    const finish = (r) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      conn.destroy();
      resolve(r);
    };
    const conn = net.createConnection(sock);
    // A claim that waits is answered within padrun's --wait ($PADRUN_WAIT).
    const wait = req.wait ? Math.max(0, Number(process.env.PADRUN_WAIT) || 0) : 0;
    const limit = 30 + Math.ceil(wait);
    const timer = setTimeout(() => finish({ result: "error", error: "padrun did not answer within " + limit + "s" }), limit * 1000);
    if (background) {
      timer.unref();
      conn.unref();
    }
    conn.setEncoding("utf8");
    conn.on("connect", () => conn.write(JSON.stringify(req) + "\n"));
    conn.on("data", (d) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      try {
        finish(JSON.parse(buf.slice(0, nl)));
      } catch (e) {
        finish({ result: "error", error: "bad answer from padrun: " + e.message });
      }
    });
    conn.on("error", (e) => finish({ result: "error", error: "cannot reach padrun at " + sock + ": " + e.message }));
    conn.on("close", () => finish({ result: "error", error: "padrun closed the control socket" }));
  });
}

