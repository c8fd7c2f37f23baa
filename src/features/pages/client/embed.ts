// /assets/embed.js, for the integrator's page: sizes every iframe of our embedded pages to the height they report ("scheduling:height").
(() => {
  // The service is where this script came from: only frames of that origin are listened to and resized.
  const script = document.currentScript as HTMLScriptElement | null;
  const origin = script ? new URL(script.src, location.href).origin : undefined;
  if (!origin) return;
  window.addEventListener("message", (e: MessageEvent) => {
    const data = e.data as { type?: unknown; height?: unknown } | null;
    if (e.origin !== origin || !data || data.type !== "scheduling:height" || typeof data.height !== "number" || !(data.height > 0)) return;
    for (const frame of Array.from(document.getElementsByTagName("iframe"))) {
      if (frame.contentWindow === e.source) frame.style.height = `${Math.ceil(data.height)}px`;
    }
  });
  // Loaded async, this may run after a frame's first report: each frame loaded by now is asked to report again
  // (one that is still loading reports on its own once it has).
  for (const frame of Array.from(document.getElementsByTagName("iframe"))) frame.contentWindow?.postMessage({ type: "scheduling:measure" }, origin);
})();
