/** Keeps one part of the page (a tab, the side pane) from taking the whole app down: a render error shows what failed there, and the rest keeps working. */
import { Component, type ErrorInfo, type ReactNode } from 'react';

interface Props {
  /** What this part is, in words ("The Training tab"). */
  area: string;
  children: ReactNode;
}

interface State {
  error: Error | null;
}

/** Renders `children`, or, after one of them threw while rendering, a message naming `area` and the error with a way to try again. */
export class ErrorBoundary extends Component<Props, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: unknown): State {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.error(`${this.props.area} failed to render: ${error.message}`, info.componentStack);
  }

  override render(): ReactNode {
    const { error } = this.state;
    if (!error) return this.props.children;
    return (
      <div className="error-boundary" role="alert" data-testid="error-boundary">
        <p>
          <b>{this.props.area} could not be shown:</b> {error.message}
        </p>
        <p className="muted">
          The rest of the page still works and nothing was lost: your files, runs and checkpoints are kept. Try again, or switch tabs; if it happens again, the message above says what broke.
        </p>
        {error.stack && (
          <details>
            <summary>Details</summary>
            <pre>{error.stack}</pre>
          </details>
        )}
        <button type="button" onClick={() => this.setState({ error: null })} data-testid="error-boundary-retry">
          Try again
        </button>
      </div>
    );
  }
}
