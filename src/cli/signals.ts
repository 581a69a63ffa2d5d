/** Waiting for the signals that stop the long-running commands (serve, mcp --http). */

/** Waits for SIGINT or SIGTERM. */
export function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const on = (sig: string) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(sig);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
