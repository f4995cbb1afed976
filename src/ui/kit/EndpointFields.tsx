import { useState, type ReactNode } from 'react';

/** What the endpoint fields show and where their edits go; the key is write-only, kept by the caller's storage. */
export interface EndpointFieldsProps {
  baseURL: string;
  model: string;
  /** Whether a key is stored (the key itself is never shown back). */
  hasApiKey: boolean;
  /** Reads the stored key once, for the field's first value. */
  readApiKey: () => string;
  onEndpointChange: (change: { baseURL?: string; model?: string }) => void;
  onApiKeyChange: (key: string) => void;
  /** Prefix of the inputs' test ids: `${prefix}-base-url`, `${prefix}-model`, `${prefix}-api-key`. */
  testIdPrefix: string;
  /** The hint under the fields: where the key goes and where it never goes. */
  hint: ReactNode;
}

/** The base URL, model and API key of an OpenAI-compatible endpoint (the policy's or the judge's). */
export function EndpointFields({ baseURL, model, hasApiKey, readApiKey, onEndpointChange, onApiKeyChange, testIdPrefix, hint }: EndpointFieldsProps) {
  const [key, setKey] = useState(readApiKey);
  return (
    <div className="fields">
      <label>
        Base URL
        <input
          value={baseURL}
          data-testid={`${testIdPrefix}-base-url`}
          onChange={(event) => onEndpointChange({ baseURL: event.target.value })}
          placeholder="http://localhost:8000/v1"
          spellCheck={false}
        />
      </label>
      <label>
        Model
        <input value={model} data-testid={`${testIdPrefix}-model`} onChange={(event) => onEndpointChange({ model: event.target.value })} spellCheck={false} />
      </label>
      <label>
        API key
        <input
          type="password"
          value={key}
          data-testid={`${testIdPrefix}-api-key`}
          autoComplete="off"
          onChange={(event) => {
            setKey(event.target.value);
            onApiKeyChange(event.target.value);
          }}
          placeholder={hasApiKey ? 'stored' : 'optional'}
        />
      </label>
      <p className="hint">{hint}</p>
    </div>
  );
}
