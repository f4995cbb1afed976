/**
 * The DOM half of the sandbox: an invisible `<iframe sandbox="allow-scripts">` (opaque origin, no
 * allow-same-origin) on /sandbox/frame.html, whose CSP forbids network access. The frame starts the
 * runtime as a classic blob worker and hands it one end of a MessageChannel; the app keeps the other.
 * Disposing removes the frame after telling it nothing: removing the document terminates its worker.
 */
import { FRAME_READY, FRAME_START, FRAME_WORKER_ERROR } from '../../../workers/sandbox/protocol.ts';
import type { CreateSandboxFrame, SandboxFrame } from '../../../workers/sandbox-bridge.ts';

const FRAME_URL = `${import.meta.env.BASE_URL}sandbox/frame.html`;
const FRAME_LOAD_TIMEOUT_MS = 15_000;

/** Creates a sandbox frame and starts `runtime` in it. */
export const createIframeSandbox: CreateSandboxFrame = (runtime) =>
  new Promise<SandboxFrame>((resolve, reject) => {
    const iframe = document.createElement('iframe');
    iframe.setAttribute('sandbox', 'allow-scripts');
    iframe.setAttribute('aria-hidden', 'true');
    iframe.dataset.testid = 'sandbox-frame';
    iframe.title = 'TabRL sandbox';
    iframe.style.display = 'none';
    iframe.src = FRAME_URL;
    const errorListeners: ((message: string) => void)[] = [];
    const channel = new MessageChannel();
    let started = false;

    const onMessage = (event: MessageEvent) => {
      if (event.source !== iframe.contentWindow) return;
      const data = event.data as { type?: string; message?: string } | null;
      if (data?.type === FRAME_READY && !started) {
        started = true;
        clearTimeout(timer);
        iframe.contentWindow?.postMessage({ type: FRAME_START, runtime }, '*', [channel.port2]);
        resolve(frame);
      } else if (data?.type === FRAME_WORKER_ERROR) {
        for (const listener of errorListeners) listener(data.message ?? 'unknown error');
      }
    };
    const dispose = () => {
      window.removeEventListener('message', onMessage);
      channel.port1.close();
      iframe.remove();
    };
    const frame: SandboxFrame = {
      port: channel.port1,
      onError: (listener) => errorListeners.push(listener),
      dispose,
    };
    const timer = setTimeout(() => {
      dispose();
      reject(new Error(`the sandbox frame (${FRAME_URL}) did not start within ${FRAME_LOAD_TIMEOUT_MS / 1000} s`));
    }, FRAME_LOAD_TIMEOUT_MS);
    window.addEventListener('message', onMessage);
    document.body.appendChild(iframe);
  });
