// Runs in each test worker before its files: the tests' fetch lets go of an idle connection long before the server would.
import { Agent, setGlobalDispatcher } from "undici";

/*
 * The service closes an idle HTTP/1.1 connection 5 s after its last answer and says so (Keep-Alive: timeout=5);
 * fetch keeps it for 3 s (undici takes 2 s off the server's word). On a loaded machine the client's timer can run
 * seconds late, and a request then leaves on a connection the server has just closed: "fetch failed: other side
 * closed" (ECONNRESET), in a test that has nothing to do with connections. Workers also keep their connections
 * from one file to the next (isolate: false in vitest.config.ts). One second leaves four of slack.
 * test/fakes/microsoft.test.ts sets a dispatcher of its own for a while and puts this one back.
 */
setGlobalDispatcher(new Agent({ keepAliveMaxTimeout: 1000 }));
