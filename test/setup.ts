// Runs in each test worker before its files: the tests' fetch lets go of an idle connection long before the server would, and starts every test on fresh ones.
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from "undici";
import { beforeEach } from "vitest";

/*
 * The service closes an idle HTTP/1.1 connection 5 s after its last answer and says so (Keep-Alive: timeout=5);
 * fetch keeps it for 3 s (undici takes 2 s off the server's word). On a loaded machine the client's timer can run
 * seconds late, and a request then leaves on a connection the server has just closed: "fetch failed: other side
 * closed" (ECONNRESET), in a test that has nothing to do with connections. Workers also keep their connections
 * from one file to the next (isolate: false in vitest.config.ts). One second leaves four of slack.
 * test/fakes/microsoft.test.ts sets a dispatcher of its own for a while and puts this one back.
 * test/helpers/raw.ts's own agent (node:http) meets the same race and sends such a request again (issue 38's CI).
 */
const fresh = () => new Agent({ keepAliveMaxTimeout: 1000 });
let ours = fresh();
setGlobalDispatcher(ours);

/*
 * A timer cannot run while the test's own code holds the event loop: test/api/openapi.test.ts validates the whole
 * OpenAPI document synchronously for seconds (11 s on a loaded machine), and the next test's first request left
 * on the connection its beforeAll had used, which the server had closed 5 s after its answer, as announced; the
 * FIN sat unread behind the busy loop ("fetch failed: other side closed", issue 33). Not a server fault: the
 * server kept the connection for as long as it said. Each test therefore starts on a dispatcher of its own; the
 * previous one finishes what is in flight and closes its idle connections.
 */
beforeEach(() => {
  const previous = getGlobalDispatcher();
  // A file that set a dispatcher of its own (test/fakes/microsoft.test.ts, for its certificate) keeps it.
  if (previous !== ours) return;
  ours = fresh();
  setGlobalDispatcher(ours);
  void previous.close().catch(() => undefined);
});
